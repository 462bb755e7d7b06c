import { beforeAll, expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'

describeDb('v1 users', () => {
  let call: ReturnType<typeof withKey>
  let other: ReturnType<typeof withKey>

  const t = useTestApp()
  beforeAll(async () => {
    call = withKey(t.app, (await t.newAccount()).apiKey)
    other = withKey(t.app, (await t.newAccount()).apiKey)
  })

  const createUser = async (fields: Record<string, string> = {}) => {
    const res = await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Ann Lee', ...fields }) })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }

  it('creates a user with a random usr_ id, Location and ETag', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/user',
      payload: { name: 'Ann', email: 'ann@example.com', phone: '+44 1234' },
    })
    expect(res.statusCode).toBe(201)
    const user = res.json()
    expect(user).toMatchObject({
      object: 'user',
      name: 'Ann',
      email: 'ann@example.com',
      phone: '+44 1234',
      version: 1,
    })
    expect(user.id).toMatch(/^usr_[0-9A-Za-z]{20}$/)
    expect(res.headers.location).toBe(`/v1/user/${user.id}`)
    expect(res.headers.etag).toBe('"1"')
  })

  it('requires a name and refuses unknown fields', async () => {
    const missing = await call({ method: 'POST', url: '/v1/user', ...form({ email: 'x@example.com' }) })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ code: 'parameter_missing', param: 'name' })
    const unknown = await call({ method: 'POST', url: '/v1/user', ...form({ name: 'A', age: '3' }) })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject({ code: 'parameter_unknown', param: 'age' })
  })

  it('gets, patches (clearing with an empty value) and deletes a user', async () => {
    const user = await createUser({ phone: '123' })
    expect((await call({ method: 'GET', url: `/v1/user/${user.id}` })).json()).toEqual(user)
    const patched = await call({
      method: 'PATCH',
      url: `/v1/user/${user.id}`,
      ...form({ phone: '', name: 'Ann B' }),
    })
    expect(patched.json()).toMatchObject({ phone: null, name: 'Ann B', version: 2 })
    const deleted = await call({ method: 'DELETE', url: `/v1/user/${user.id}` })
    expect(deleted.json()).toEqual({ id: user.id, object: 'user', deleted: true })
    expect((await call({ method: 'GET', url: `/v1/user/${user.id}` })).statusCode).toBe(404)
  })

  it('refuses to delete a user while pets reference it (409), then allows it once they are gone', async () => {
    const user = await createUser()
    const pet = (
      await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', owner_id: user.id }) })
    ).json()
    const refused = await call({ method: 'DELETE', url: `/v1/user/${user.id}` })
    expect(refused.statusCode).toBe(409)
    expect(refused.json()).toMatchObject({ code: 'user_has_pets', pet_count: 1 })
    expect((await call({ method: 'GET', url: `/v1/user/${user.id}` })).statusCode).toBe(200)

    await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ owner_id: '' }) })
    expect((await call({ method: 'DELETE', url: `/v1/user/${user.id}` })).statusCode).toBe(200)
  })

  it("answers 404 for another account's user on get, patch, delete and leaves it unchanged", async () => {
    const user = await createUser()
    for (const req of [
      { method: 'GET' as const, url: `/v1/user/${user.id}` },
      { method: 'PATCH' as const, url: `/v1/user/${user.id}`, ...form({ name: 'Mallory' }) },
      { method: 'DELETE' as const, url: `/v1/user/${user.id}` },
    ]) {
      const res = await other(req)
      expect(res.statusCode, req.method).toBe(404)
      expect(res.json().code).toBe('user_not_found')
    }
    expect((await call({ method: 'GET', url: `/v1/user/${user.id}` })).json()).toEqual(user)
    const list = (await other({ method: 'GET', url: '/v1/user?limit=100' })).json()
    expect(list.data.map((u: { id: string }) => u.id)).not.toContain(user.id)
  })

  it('lists users newest first with cursors both ways, and refuses a foreign cursor', async () => {
    const { apiKey } = await t.newAccount()
    const mine = withKey(t.app, apiKey)
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push((await mine({ method: 'POST', url: '/v1/user', ...form({ name: `U${i}` }) })).json().id)
    const first = (await mine({ method: 'GET', url: '/v1/user?limit=2' })).json()
    expect(first).toMatchObject({ object: 'list', has_more: true, url: '/v1/user' })
    expect(first.data.map((u: { id: string }) => u.id)).toEqual([ids[4], ids[3]])
    const second = (await mine({ method: 'GET', url: `/v1/user?limit=2&starting_after=${ids[3]}` })).json()
    expect(second.data.map((u: { id: string }) => u.id)).toEqual([ids[2], ids[1]])
    const back = (await mine({ method: 'GET', url: `/v1/user?limit=2&ending_before=${ids[2]}` })).json()
    expect(back.data.map((u: { id: string }) => u.id)).toEqual([ids[4], ids[3]])

    const foreignCursor = await other({ method: 'GET', url: `/v1/user?starting_after=${ids[0]}` })
    expect(foreignCursor.statusCode).toBe(400)
    expect(foreignCursor.json()).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' })
  })

  it('takes a username (form or JSON), shows it, and clears it with an empty value', async () => {
    const made = await createUser({ username: 'ann.lee' })
    expect(made).toMatchObject({ username: 'ann.lee', name: 'Ann Lee' })
    expect(await createUser()).toMatchObject({ username: null })
    const json = await call({ method: 'POST', url: '/v1/user', payload: { name: 'Jo', username: 'jo' } })
    expect(json.json().username).toBe('jo')
    const patched = await call({ method: 'PATCH', url: `/v1/user/${made.id}`, ...form({ username: 'ann' }) })
    expect(patched.json()).toMatchObject({ username: 'ann', version: 2 })
    const cleared = await call({ method: 'PATCH', url: `/v1/user/${made.id}`, ...form({ username: '' }) })
    expect(cleared.json().username).toBeNull()
  })

  it('keeps usernames unique in an account (409 naming it), not across accounts', async () => {
    const first = await createUser({ username: 'unique-one' })
    const again = await call({
      method: 'POST',
      url: '/v1/user',
      ...form({ name: 'B', username: 'unique-one' }),
    })
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({ code: 'username_taken', param: 'username' })
    expect(again.json().detail).toContain('"unique-one"')
    const second = await createUser({ username: 'unique-two' })
    const rename = await call({
      method: 'PATCH',
      url: `/v1/user/${second.id}`,
      ...form({ username: 'unique-one' }),
    })
    expect(rename.statusCode).toBe(409)
    expect((await call({ method: 'GET', url: `/v1/user/${second.id}` })).json().username).toBe('unique-two')
    // Setting a user's own username again is no conflict.
    const same = await call({
      method: 'PATCH',
      url: `/v1/user/${first.id}`,
      ...form({ username: 'unique-one' }),
    })
    expect(same.statusCode).toBe(200)
    const elsewhere = await other({
      method: 'POST',
      url: '/v1/user',
      ...form({ name: 'C', username: 'unique-one' }),
    })
    expect(elsewhere.statusCode).toBe(201)
  })

  it('refuses a username that cannot name a user in a URL (400 naming it)', async () => {
    for (const username of ['a b', 'x'.repeat(65), 'login', '..']) {
      const res = await call({ method: 'POST', url: '/v1/user', ...form({ name: 'A', username }) })
      expect(res.statusCode, username).toBe(400)
      expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: 'username' })
    }
  })

  it('puts the username in the user.* events', async () => {
    const user = await createUser({ username: 'evented' })
    await call({ method: 'PATCH', url: `/v1/user/${user.id}`, ...form({ username: 'evented-2' }) })
    const events = (await call({ method: 'GET', url: `/v1/event?object_id=${user.id}` })).json().data
    expect(events.map((e: { type: string }) => e.type)).toEqual(['user.updated', 'user.created'])
    expect(events[1].data.object.username).toBe('evented')
    expect(events[0].data.object.username).toBe('evented-2')
    expect(events[0].data.previous_attributes).toEqual({ username: 'evented' })
  })
})
