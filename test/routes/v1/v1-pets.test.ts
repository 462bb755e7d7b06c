import { beforeAll, expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'

describeDb('v1 pets', () => {
  let call: ReturnType<typeof withKey>
  let other: ReturnType<typeof withKey>

  const t = useTestApp()
  beforeAll(async () => {
    call = withKey(t.app, (await t.newAccount()).apiKey)
    other = withKey(t.app, (await t.newAccount()).apiKey)
  })

  async function createPet(fields: Record<string, string> = {}) {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', ...fields }) })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }

  it('creates a pet from form fields, answering 201 with the pet, Location and ETag', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Rex', species: 'dog', breed: 'collie' }),
    })
    expect(res.statusCode).toBe(201)
    const pet = res.json()
    expect(pet).toMatchObject({
      object: 'pet',
      name: 'Rex',
      species: 'dog',
      breed: 'collie',
      owner_id: null,
      status: 'available',
      photo_urls: [],
      tags: [],
      category: null,
      version: 1,
    })
    expect(pet.id).toBeGreaterThan(0)
    expect(res.headers.location).toBe(`/v1/pet/${pet.id}`)
    expect(res.headers.etag).toBe('"1"')
    expect(res.headers['request-id']).toMatch(/^req_/)
  })

  it('creates a pet from a JSON body', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: { name: 'Tom', species: 'cat', status: 'pending' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ name: 'Tom', species: 'cat', status: 'pending' })
  })

  it.each([
    ['missing', {}, 'parameter_missing'],
    ['empty', { name: '' }, 'parameter_invalid'],
    ['blank', { name: '   ' }, 'parameter_invalid'],
    ['overlong', { name: 'x'.repeat(201) }, 'parameter_invalid'],
  ])('refuses a %s name with 400 naming the field', async (_case, fields, code) => {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form(fields as Record<string, string>) })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toContain('application/problem+json')
    expect(res.json()).toMatchObject({ code, param: 'name', status: 400 })
    expect(res.json().detail).toContain('name')
  })

  it('accepts a name of exactly 200 characters', async () => {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'x'.repeat(200) }) })
    expect(res.statusCode).toBe(201)
  })

  it('refuses an unknown parameter, naming it', async () => {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', colour: 'brown' }) })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_unknown', param: 'colour' })
    expect(res.json().detail).toContain('colour')
  })

  it('answers the nested owner object of the old sample with a hint to send owner_id', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: { name: 'Rex', owner: { id: 1, name: 'Ann' } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_unknown', param: 'owner' })
    expect(res.json().detail).toContain('owner_id')
  })

  it('refuses a JSON value of the wrong type instead of coercing it', async () => {
    const res = await call({ method: 'POST', url: '/v1/pet', payload: { name: 42 } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: 'name' })
  })

  it('refuses an unknown status value', async () => {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', status: 'lost' }) })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: 'status' })
  })

  it('refuses an owner_id that names no user, and one of another account, with 400 param owner_id', async () => {
    const unknown = await call({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Rex', owner_id: 'usr_nope' }),
    })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject({ code: 'owner_not_found', param: 'owner_id' })

    const foreignUser = await other({ method: 'POST', url: '/v1/user', ...form({ name: 'Ann' }) })
    expect(foreignUser.statusCode).toBe(201)
    const foreign = await call({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Rex', owner_id: foreignUser.json().id }),
    })
    expect(foreign.statusCode).toBe(400)
    expect(foreign.json()).toMatchObject({ code: 'owner_not_found', param: 'owner_id' })
  })

  it('links a pet to an owner of the same account', async () => {
    const user = (await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Ann' }) })).json()
    const pet = await createPet({ owner_id: user.id })
    expect(pet.owner_id).toBe(user.id)
  })

  it('gets, patches and deletes a pet', async () => {
    const pet = await createPet()
    const got = await call({ method: 'GET', url: `/v1/pet/${pet.id}` })
    expect(got.statusCode).toBe(200)
    expect(got.json()).toEqual(pet)
    expect(got.headers.etag).toBe('"1"')

    const patched = await call({
      method: 'PATCH',
      url: `/v1/pet/${pet.id}`,
      ...form({ breed: 'beagle', species: 'dog' }),
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({ breed: 'beagle', species: 'dog', name: 'Rex', version: 2 })
    expect(patched.headers.etag).toBe('"2"')

    const cleared = await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, payload: { breed: null } })
    expect(cleared.json()).toMatchObject({ breed: null, version: 3 })

    const deleted = await call({ method: 'DELETE', url: `/v1/pet/${pet.id}` })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ id: pet.id, object: 'pet', deleted: true })
    expect((await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).statusCode).toBe(404)
  })

  it('answers 404 with a problem for a pet that does not exist', async () => {
    const res = await call({ method: 'GET', url: '/v1/pet/999999999' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ code: 'pet_not_found', status: 404 })
  })

  it('answers 400 for a pet id that is not an int64, 404 for one no pet can have (the one id rule)', async () => {
    for (const id of ['abc', '1.5', '99999999999999999999']) {
      const res = await call({ method: 'GET', url: `/v1/pet/${id}` })
      expect(res.statusCode, id).toBe(400)
      expect(res.json().param).toBe('id')
    }
    for (const id of ['0', '-1']) {
      const res = await call({ method: 'GET', url: `/v1/pet/${id}` })
      expect(res.statusCode, id).toBe(404)
      expect(res.json().code).toBe('pet_not_found')
    }
  })

  it("answers 404 for another account's pet on get, patch and delete, and leaves it unchanged", async () => {
    const pet = await createPet({ species: 'dog' })
    for (const req of [
      { method: 'GET' as const, url: `/v1/pet/${pet.id}` },
      { method: 'PATCH' as const, url: `/v1/pet/${pet.id}`, ...form({ name: 'Stolen' }) },
      { method: 'DELETE' as const, url: `/v1/pet/${pet.id}` },
    ]) {
      const res = await other(req)
      expect(res.statusCode, req.method).toBe(404)
      expect(res.json().code).toBe('pet_not_found')
    }
    const list = await other({ method: 'GET', url: '/v1/pet?limit=100' })
    expect(list.json().data.map((p: { id: number }) => p.id)).not.toContain(pet.id)
    expect((await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).json()).toEqual(pet)
  })

  it('enforces status transitions: sold is final (409 naming the allowed ones)', async () => {
    const pet = await createPet()
    const pending = await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'pending' }) })
    expect(pending.json().status).toBe('pending')
    const back = await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'available' }) })
    expect(back.json().status).toBe('available')
    const sold = await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'sold' }) })
    expect(sold.json().status).toBe('sold')

    const again = await call({
      method: 'PATCH',
      url: `/v1/pet/${pet.id}`,
      ...form({ status: 'available', name: 'Renamed' }),
    })
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({
      code: 'invalid_status_transition',
      param: 'status',
      allowed_transitions: [],
    })
    const after = (await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).json()
    expect(after).toMatchObject({ status: 'sold', name: 'Rex', version: sold.json().version })

    const renamed = await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ name: 'Still sold' }) })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ status: 'sold', name: 'Still sold' })
  })

  it('refuses a stale If-Match with 412 and applies a current one', async () => {
    const pet = await createPet()
    await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ breed: 'pug' }) })
    const stale = await call({
      method: 'PATCH',
      url: `/v1/pet/${pet.id}`,
      ...form({ breed: 'boxer' }),
      headers: { 'if-match': '"1"', 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(stale.statusCode).toBe(412)
    expect(stale.json().code).toBe('precondition_failed')
    expect((await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).json().breed).toBe('pug')

    const current = await call({
      method: 'PATCH',
      url: `/v1/pet/${pet.id}`,
      payload: { breed: 'boxer' },
      headers: { 'if-match': '"2"' },
    })
    expect(current.statusCode).toBe(200)
    expect(current.json().breed).toBe('boxer')

    const staleDelete = await call({
      method: 'DELETE',
      url: `/v1/pet/${pet.id}`,
      headers: { 'if-match': '"2"' },
    })
    expect(staleDelete.statusCode).toBe(412)
    expect((await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).statusCode).toBe(200)
  })

  it('loses no update when two PATCHes race', async () => {
    const pet = await createPet()
    await Promise.all([
      call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, payload: { species: 'dog' } }),
      call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, payload: { breed: 'husky' } }),
    ])
    const after = (await call({ method: 'GET', url: `/v1/pet/${pet.id}` })).json()
    expect(after).toMatchObject({ species: 'dog', breed: 'husky', version: 3 })
  })

  it('writes an event row with every change, in the same transaction', async () => {
    const { accountId, apiKey } = await t.newAccount()
    const mine = withKey(t.app, apiKey)
    const pet = (await mine({ method: 'POST', url: '/v1/pet', ...form({ name: 'Evt' }) })).json()
    await mine({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ name: 'Evt2' }) })
    await mine({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'sold' }) })
    await mine({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'available' }) }) // refused: no event
    await mine({ method: 'DELETE', url: `/v1/pet/${pet.id}` })
    const events = await t.database.db
      .selectFrom('events')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('seq')
      .execute()
    expect(events.map((e) => e.type)).toEqual(['pet.created', 'pet.updated', 'pet.updated', 'pet.deleted'])
    expect(JSON.parse(events[1]!.previous_attributes!)).toEqual({ name: 'Evt' })
    expect(JSON.parse(events[1]!.data)).toMatchObject({ name: 'Evt2', version: 2 })
  })
})
