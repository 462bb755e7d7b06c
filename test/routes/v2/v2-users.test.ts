import { afterAll, beforeAll, expect, it } from 'vitest'
import { verifyPassword } from '../../../src/accounts/passwords.ts'
import { createTestApp, type TestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../../helpers/oauth.ts'

describeDb('v2 users (Petstore compatible, by integer id)', () => {
  let t: TestApp
  let client: TestClient
  let token: string

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = token) =>
    t.app.inject({
      method,
      url,
      headers: bearer(auth),
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  beforeAll(async () => {
    t = await createTestApp()
    client = await newClient(t)
    token = await accessToken(t.app, client)
  })
  afterAll(() => t.close())

  const sent = {
    username: 'jdoe',
    firstName: 'Jane',
    lastName: 'Doe',
    email: 'jane@example.com',
    password: 's3cret',
    phone: '+1 555 0100',
    userStatus: 1,
  }

  it('creates a user (200) with an integer id; the password is never shown and stored hashed', async () => {
    const res = await call('POST', '/v2/user', { id: 0, ...sent })
    expect(res.statusCode, res.body).toBe(200)
    const user = res.json()
    const { password: _password, ...shown } = sent
    expect(user).toEqual({ id: user.id, ...shown })
    expect(Number.isInteger(user.id)).toBe(true)
    expect((await call('GET', `/v2/user/${user.id}`)).json()).toEqual(user)
    const row = await t.database.db
      .selectFrom('users')
      .select(['password_hash', 'name'])
      .where('seq', '=', user.id)
      .executeTakeFirstOrThrow()
    expect(row.name).toBe('Jane Doe')
    expect(row.password_hash).not.toContain('s3cret')
    expect(await verifyPassword('s3cret', row.password_hash, { account: client.accountId })).toBe(true)
  })

  it('is the same user on v1, with its usr_ id and name', async () => {
    const user = (await call('POST', '/v2/user', { firstName: 'Ann' })).json()
    expect(user).toEqual({ id: user.id, firstName: 'Ann' })
    const list = await withKey(t.app, client.apiKey)({ method: 'GET', url: '/v1/user?limit=100' })
    const names = (list.json().data as { name: string }[]).map((u) => u.name)
    expect(names).toContain('Ann')
  })

  it('updates a user by id (full replace of the Petstore fields) and deletes it', async () => {
    const user = (await call('POST', '/v2/user', sent)).json()
    const update = { username: 'jdoe2', firstName: 'Janet', email: 'janet@example.com' }
    const res = await call('PUT', `/v2/user/${user.id}`, update)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ id: user.id, ...update })
    const deleted = await call('DELETE', `/v2/user/${user.id}`)
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ code: 200, type: 'unknown', message: String(user.id) })
    expect((await call('GET', `/v2/user/${user.id}`)).statusCode).toBe(404)
  })

  it('answers 400 for a non-integer id, 404 for an unknown or another account’s user', async () => {
    expect((await call('GET', '/v2/user/abc')).statusCode).toBe(400)
    expect((await call('GET', '/v2/user/99999999')).statusCode).toBe(404)
    const user = (await call('POST', '/v2/user', sent)).json()
    const other = await accessToken(t.app, await newClient(t))
    expect((await call('GET', `/v2/user/${user.id}`, undefined, other)).statusCode).toBe(404)
    expect((await call('PUT', `/v2/user/${user.id}`, { username: 'x' }, other)).statusCode).toBe(404)
    expect((await call('DELETE', `/v2/user/${user.id}`, undefined, other)).statusCode).toBe(404)
    expect((await call('GET', `/v2/user/${user.id}`)).json().username).toBe('jdoe')
  })

  it('answers an invalid body with 422 listing the fields, and changes nothing', async () => {
    const user = (await call('POST', '/v2/user', sent)).json()
    const res = await call('PUT', `/v2/user/${user.id}`, { userStatus: 'x', nickname: 'j' })
    expect(res.statusCode).toBe(422)
    expect(
      res
        .json()
        .errors.map((e: { param: string }) => e.param)
        .sort(),
    ).toEqual(['nickname', 'userStatus'])
    expect((await call('GET', `/v2/user/${user.id}`)).json()).toEqual(user)
  })

  it('refuses user writes without write:users (403) and reads without read:users (403)', async () => {
    const petsOnly = await accessToken(t.app, client, 'read:pets write:pets')
    const res = await call('POST', '/v2/user', sent, petsOnly)
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toContain('scope="write:users"')
    expect((await call('GET', '/v2/user/1', undefined, petsOnly)).statusCode).toBe(403)
  })

  it('refuses to delete a user who still owns pets (409)', async () => {
    const user = (await call('POST', '/v2/user', sent)).json()
    const v1User = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('seq', '=', user.id)
      .executeTakeFirstOrThrow()
    const pet = await call('POST', '/v2/pet', { name: 'owned', photoUrls: [], ownerId: v1User.id })
    expect(pet.statusCode, pet.body).toBe(200)
    expect(pet.json().ownerId).toBe(v1User.id)
    expect((await call('DELETE', `/v2/user/${user.id}`)).statusCode).toBe(409)
  })
})
