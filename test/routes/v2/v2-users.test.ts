import { beforeAll, expect, it } from 'vitest'
import { verifyPassword } from '../../../src/accounts/passwords.ts'
import { useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../../helpers/oauth.ts'

describeDb('v2 users (Petstore compatible, by username)', () => {
  let client: TestClient
  let token: string
  let other: TestClient
  let otherToken: string

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = token) =>
    t.app.inject({
      method,
      url,
      headers: bearer(auth),
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    token = await accessToken(t.app, client)
    other = await newClient(t)
    otherToken = await accessToken(t.app, other)
  })

  const sent = {
    username: 'jdoe',
    firstName: 'Jane',
    lastName: 'Doe',
    email: 'jane@example.com',
    password: 's3cret',
    phone: '+1 555 0100',
    userStatus: 1,
  }
  const { password: _password, ...shown } = sent

  const row = (accountId: string, username: string) =>
    t.database.db
      .selectFrom('users')
      .select(['id', 'name', 'password_hash', 'petstore_id', 'version'])
      .where('account_id', '=', accountId)
      .where('username', '=', username)
      .executeTakeFirst()

  it('creates a user (200) with the account’s next id, readable at /v2/user/{username}; the password is stored hashed only', async () => {
    const res = await call('POST', '/v2/user', sent)
    expect(res.statusCode, res.body).toBe(200)
    const user = res.json()
    // The account's first user: ids are the account's own, from 1.
    expect(user).toEqual({ id: 1, ...shown })
    expect(res.headers.location).toBe('/v2/user/jdoe')
    expect((await call('GET', '/v2/user/jdoe')).json()).toEqual(user)
    const stored = await row(client.accountId, 'jdoe')
    expect(stored?.name).toBe('Jane Doe')
    expect(stored?.password_hash).not.toContain('s3cret')
    expect(await verifyPassword('s3cret', stored?.password_hash ?? null, { account: client.accountId })).toBe(
      true,
    )
  })

  it('lets two accounts each have their own "alice", with their own ids, and never shows one to the other', async () => {
    const mine = await call('POST', '/v2/user', { username: 'alice', firstName: 'Mine' })
    const theirs = await call('POST', '/v2/user', { username: 'alice', firstName: 'Theirs' }, otherToken)
    expect(mine.statusCode, mine.body).toBe(200)
    expect(theirs.statusCode, theirs.body).toBe(200)
    expect(theirs.json().id).toBe(1)
    expect((await call('GET', '/v2/user/alice')).json().firstName).toBe('Mine')
    expect((await call('GET', '/v2/user/alice', undefined, otherToken)).json().firstName).toBe('Theirs')

    // Only A has "jdoe": B can neither read, change nor delete it.
    expect((await call('GET', '/v2/user/jdoe', undefined, otherToken)).statusCode).toBe(404)
    expect((await call('PUT', '/v2/user/jdoe', { firstName: 'x' }, otherToken)).statusCode).toBe(404)
    expect((await call('DELETE', '/v2/user/jdoe', undefined, otherToken)).statusCode).toBe(404)
    const gone = await call('GET', '/v2/user/nobody')
    expect(gone.statusCode).toBe(404)
    expect(gone.json()).toMatchObject({ code: 'user_not_found', title: 'User not found', param: 'username' })
    expect((await call('GET', '/v2/user/jdoe')).json()).toEqual({ id: 1, ...shown })
  })

  it('replaces the user when a username is posted again (the Petstore’s way), keeping its id and, when none is sent, its password', async () => {
    const first = (
      await call('POST', '/v2/user', { username: 'again', firstName: 'One', password: 'pw-one' })
    ).json()
    const before = await row(client.accountId, 'again')
    const second = await call('POST', '/v2/user', { username: 'again', lastName: 'Two' })
    expect(second.statusCode, second.body).toBe(200)
    expect(second.json()).toEqual({ id: first.id, username: 'again', lastName: 'Two' })
    expect(second.headers.etag).toBe(`"${(before?.version ?? 0) + 1}"`)
    const after = await row(client.accountId, 'again')
    expect(after?.password_hash).toBe(before?.password_hash)
    const count = await t.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', client.accountId)
      .where('username', '=', 'again')
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(1)
    const events = await withKey(
      t.app,
      client.apiKey,
    )({ method: 'GET', url: `/v1/event?object_id=${before?.id}&limit=10` })
    expect(events.json().data.map((e: { type: string }) => e.type)).toEqual(['user.updated', 'user.created'])
  })

  it('keeps one user per username when the same new username is posted many times at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('POST', '/v2/user', { username: 'racer', userStatus: i })),
    )
    // Each one created or replaced it; one that lost the race to create it is told so (409).
    for (const res of answers) expect([200, 409], res.body).toContain(res.statusCode)
    for (const res of answers.filter((r) => r.statusCode === 409))
      expect(res.json().code).toBe('username_taken')
    const rows = await t.database.db
      .selectFrom('users')
      .select('petstore_id')
      .where('account_id', '=', client.accountId)
      .where('username', '=', 'racer')
      .execute()
    expect(rows).toHaveLength(1)
    expect((await call('GET', '/v2/user/racer')).json().id).toBe(rows[0]!.petstore_id)
  })

  it('keeps a client-chosen id, and refuses one another user of the account has (409)', async () => {
    const chosen = await call('POST', '/v2/user', { id: 500, username: 'chosen' })
    expect(chosen.statusCode, chosen.body).toBe(200)
    expect(chosen.json().id).toBe(500)
    // The other account may use the same id.
    expect((await call('POST', '/v2/user', { id: 500, username: 'chosen' }, otherToken)).json().id).toBe(500)
    const clash = await call('POST', '/v2/user', { id: 500, username: 'clash' })
    expect(clash.statusCode).toBe(409)
    expect(clash.json()).toMatchObject({ code: 'user_id_taken', param: 'id' })
    expect((await call('GET', '/v2/user/clash')).statusCode).toBe(404)
    // Ids chosen just ahead of the assigned ones are skipped by the next assigned id.
    const last = (await call('POST', '/v2/user', { username: 'assigned' })).json().id as number
    const ahead = [1, 2, 3].map((n) => last + n)
    for (const id of ahead) {
      expect((await call('POST', '/v2/user', { id, username: `ahead-${id}` })).statusCode).toBe(200)
    }
    const next = await call('POST', '/v2/user', { username: 'after-chosen' })
    expect(next.statusCode, next.body).toBe(200)
    expect([...ahead, 500, last]).not.toContain(next.json().id)
    for (const id of [0, -1, 2 ** 53]) {
      const res = await call('POST', '/v2/user', { id, username: 'badid' })
      expect(res.statusCode, String(id)).toBe(422)
      expect(res.json().param).toBe('id')
    }
  })

  it('requires a username on create, and refuses one that cannot name a user in a URL (422 naming it)', async () => {
    const missing = await call('POST', '/v2/user', { firstName: 'Ann' })
    expect(missing.statusCode).toBe(422)
    expect(missing.json()).toMatchObject({ code: 'validation_failed', param: 'username' })
    for (const username of [
      '',
      'a b',
      'a/b',
      '..',
      'x'.repeat(65),
      'login',
      'logout',
      'createWithArray',
      'é',
    ]) {
      const res = await call('POST', '/v2/user', { username })
      expect(res.statusCode, username).toBe(422)
      expect(res.json().param, username).toBe('username')
    }
    const bad = (await call('POST', '/v2/user', { username: 'a b' })).json()
    expect(bad.errors[0].message).toContain('letters, digits and . _ ~ @ -')
    // Dots, email addresses, tildes are fine.
    for (const username of ['a.b', 'ann@example.com', 'x~1', 'Login']) {
      expect((await call('POST', '/v2/user', { username })).statusCode, username).toBe(200)
    }
    expect((await call('GET', `/v2/user/${encodeURIComponent('ann@example.com')}`)).statusCode).toBe(200)
  })

  it('answers 400 "Invalid username supplied" for a username with a control character', async () => {
    const res = await call('GET', '/v2/user/a%00b')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_username', title: 'Invalid username supplied' })
    expect((await call('DELETE', '/v2/user/a%0Ab')).statusCode).toBe(400)
  })

  it('updates by username: a full replace; the body’s username renames (409 when taken); absent, it stays', async () => {
    await call('POST', '/v2/user', { ...sent, username: 'renamer' })
    await call('POST', '/v2/user', { username: 'taken' })
    const taken = await call('PUT', '/v2/user/renamer', { username: 'taken', firstName: 'X' })
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toMatchObject({ code: 'username_taken', param: 'username' })
    expect(taken.json().detail).toContain('"taken"')

    const kept = await call('PUT', '/v2/user/renamer', { firstName: 'Janet' })
    expect(kept.statusCode, kept.body).toBe(200)
    expect(kept.json()).toEqual({ id: kept.json().id, username: 'renamer', firstName: 'Janet' })

    const renamed = await call('PUT', '/v2/user/renamer', { username: 'renamed', email: 'r@example.com' })
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json()).toEqual({ id: kept.json().id, username: 'renamed', email: 'r@example.com' })
    expect(renamed.headers['content-location']).toBe('/v2/user/renamed')
    expect((await call('GET', '/v2/user/renamer')).statusCode).toBe(404)
    expect((await call('GET', '/v2/user/renamed')).json()).toEqual(renamed.json())
    // The password was not sent, so it was left as it was.
    const stored = await row(client.accountId, 'renamed')
    expect(await verifyPassword('s3cret', stored?.password_hash ?? null, { account: client.accountId })).toBe(
      true,
    )
    expect(stored?.name).toBe('renamed')

    const reserved = await call('PUT', '/v2/user/renamed', { username: 'login' })
    expect(reserved.statusCode).toBe(422)
    expect((await call('PUT', '/v2/user/nobody', { firstName: 'x' })).statusCode).toBe(404)
  })

  it('changes a user’s id with PUT when the id is free, and refuses another user’s (409)', async () => {
    await call('POST', '/v2/user', { username: 'moving' })
    await call('POST', '/v2/user', { id: 4242, username: 'staying' })
    const moved = await call('PUT', '/v2/user/moving', { id: 4343 })
    expect(moved.statusCode, moved.body).toBe(200)
    expect(moved.json()).toEqual({ id: 4343, username: 'moving' })
    const clash = await call('PUT', '/v2/user/moving', { id: 4242 })
    expect(clash.statusCode).toBe(409)
    expect(clash.json()).toMatchObject({ code: 'user_id_taken', param: 'id' })
    expect((await call('GET', '/v2/user/moving')).json().id).toBe(4343)
  })

  it('answers an invalid body with 422 listing the fields, and changes nothing', async () => {
    const user = (await call('POST', '/v2/user', { ...sent, username: 'invalid-body' })).json()
    const res = await call('PUT', '/v2/user/invalid-body', { userStatus: 'x', nickname: 'j' })
    expect(res.statusCode).toBe(422)
    expect(
      res
        .json()
        .errors.map((e: { param: string }) => e.param)
        .sort(),
    ).toEqual(['nickname', 'userStatus'])
    expect((await call('GET', '/v2/user/invalid-body')).json()).toEqual(user)
  })

  it('deletes by username (200, the Petstore’s ApiResponse), then answers 404', async () => {
    await call('POST', '/v2/user', { username: 'leaving' })
    const deleted = await call('DELETE', '/v2/user/leaving')
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ code: 200, type: 'unknown', message: 'leaving' })
    expect((await call('GET', '/v2/user/leaving')).statusCode).toBe(404)
    expect((await call('DELETE', '/v2/user/leaving')).statusCode).toBe(404)
  })

  it('refuses to delete a user who still owns pets (409)', async () => {
    await call('POST', '/v2/user', { username: 'owner' })
    const v1User = await row(client.accountId, 'owner')
    const pet = await call('POST', '/v2/pet', { name: 'owned', photoUrls: [], ownerId: v1User?.id })
    expect(pet.statusCode, pet.body).toBe(200)
    expect((await call('DELETE', '/v2/user/owner')).statusCode).toBe(409)
  })

  it('is the same record on v1, which shows its username; a v1 user with a username is readable on v2', async () => {
    await call('POST', '/v2/user', { username: 'both-faces', firstName: 'Ann' })
    const v1 = withKey(t.app, client.apiKey)
    const list = await v1({ method: 'GET', url: '/v1/user?limit=100' })
    const shownOnV1 = (list.json().data as { username: string | null; name: string }[]).find(
      (u) => u.username === 'both-faces',
    )
    expect(shownOnV1).toMatchObject({ name: 'Ann', username: 'both-faces' })
    const made = await v1({ method: 'POST', url: '/v1/user', payload: { name: 'Bo Lee', username: 'bo' } })
    expect(made.statusCode, made.body).toBe(201)
    const onV2 = await call('GET', '/v2/user/bo')
    expect(onV2.statusCode).toBe(200)
    expect(onV2.json()).toEqual({ id: onV2.json().id, username: 'bo' })
  })

  it('refuses user writes without write:users (403) and reads without read:users (403)', async () => {
    const petsOnly = await accessToken(t.app, client, 'read:pets write:pets')
    const res = await call('POST', '/v2/user', sent, petsOnly)
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toContain('scope="write:users"')
    expect((await call('GET', '/v2/user/jdoe', undefined, petsOnly)).statusCode).toBe(403)
    expect(
      (await call('GET', '/v2/user/login?username=jdoe&password=s3cret', undefined, petsOnly)).statusCode,
    ).toBe(403)
  })

  it('answers every /user operation without a token with a 401 that says to send the token as a default header', async () => {
    for (const [method, url, payload] of [
      ['GET', '/v2/user/jdoe', undefined],
      ['PUT', '/v2/user/jdoe', { firstName: 'x' }],
      ['DELETE', '/v2/user/jdoe', undefined],
      ['POST', '/v2/user', { username: 'x' }],
      ['POST', '/v2/user/createWithArray', [{ username: 'x' }]],
      ['POST', '/v2/user/createWithList', [{ username: 'x' }]],
      ['GET', '/v2/user/login?username=jdoe&password=s3cret', undefined],
      ['GET', '/v2/user/logout', undefined],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
      expect(res.statusCode, `${method} ${url}`).toBe(401)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.headers['www-authenticate']).toBe('Bearer')
      expect(res.json().code).toBe('token_missing')
      expect(res.json().detail).toContain('default header')
    }
    expect((await call('GET', '/v2/user/jdoe')).json().firstName).toBe('Jane')
  })
})
