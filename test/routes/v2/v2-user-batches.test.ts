import { connect } from 'node:net'
import { beforeAll, expect, it } from 'vitest'
import { passwordWork } from '../../../src/accounts/password-work.ts'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../../helpers/oauth.ts'
import { waitUntil } from '../../helpers/poll.ts'

describeDb('v2 createWithArray and createWithList (all or nothing)', () => {
  let client: TestClient
  let token: string

  const post = (path: string, payload: unknown, auth = token, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/v2/user/${path}`,
      headers: { ...bearer(auth), ...headers },
      payload: payload as object,
    })
  const get = (username: string, auth = token) =>
    t.app.inject({ method: 'GET', url: `/v2/user/${username}`, headers: bearer(auth) })
  const userCount = async (accountId = client.accountId) => {
    const row = await t.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
  const eventCount = async () => {
    const row = await t.database.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', client.accountId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    token = await accessToken(t.app, client)
  })

  for (const path of ['createWithArray', 'createWithList']) {
    it(`${path} creates every user (200, the users as stored), each readable by username`, async () => {
      const res = await post(path, [
        { username: `${path}-a`, firstName: 'A', password: 'pw-a' },
        { username: `${path}-b`, email: 'b@example.com' },
      ])
      expect(res.statusCode, res.body).toBe(200)
      const users = res.json()
      expect(users).toHaveLength(2)
      expect(users[0]).toEqual({ id: users[0].id, username: `${path}-a`, firstName: 'A' })
      expect((await get(`${path}-b`)).json()).toEqual(users[1])
    })
  }

  it('replaces the users whose usernames the account has, as POST /v2/user does', async () => {
    const first = (await post('createWithArray', [{ username: 'rerun', firstName: 'One' }])).json()
    const again = await post('createWithArray', [
      { username: 'rerun', firstName: 'Two' },
      { username: 'rerun-new' },
    ])
    expect(again.statusCode, again.body).toBe(200)
    expect(again.json()[0]).toEqual({ id: first[0].id, username: 'rerun', firstName: 'Two' })
  })

  it('creates nothing when one item is invalid, and names it ([2].username)', async () => {
    const users = await userCount()
    const events = await eventCount()
    const res = await post('createWithList', [
      { username: 'ok-1' },
      { username: 'ok-2' },
      { username: 'not valid' },
      { username: 'ok-3', userStatus: 'x' },
    ])
    expect(res.statusCode).toBe(422)
    const problem = res.json()
    expect(problem.code).toBe('validation_failed')
    expect(problem.errors.map((e: { param: string }) => e.param).sort()).toEqual([
      '[2].username',
      '[3].userStatus',
    ])
    expect(problem.detail).toContain('`[2].username`')
    expect(await userCount()).toBe(users)
    expect(await eventCount()).toBe(events)
    expect((await get('ok-1')).statusCode).toBe(404)
  })

  it('refuses a username or an id sent twice in one batch, and the names of operations', async () => {
    const twice = await post('createWithArray', [
      { username: 'dup' },
      { username: 'other' },
      { username: 'dup' },
    ])
    expect(twice.statusCode).toBe(422)
    expect(twice.json()).toMatchObject({ param: '[2].username' })
    expect(twice.json().errors[0].message).toContain('[0]')
    const ids = await post('createWithArray', [
      { id: 900, username: 'id-a' },
      { id: 900, username: 'id-b' },
    ])
    expect(ids.json()).toMatchObject({ code: 'validation_failed', param: '[1].id' })
    const reserved = await post('createWithArray', [{ username: 'fine' }, { username: 'logout' }])
    expect(reserved.json()).toMatchObject({ code: 'validation_failed', param: '[1].username' })
    expect((await get('dup')).statusCode).toBe(404)
    expect((await get('fine')).statusCode).toBe(404)
  })

  it('rolls every user back when one conflicts with the database (an id another user has): 409 naming the item', async () => {
    await post('createWithArray', [{ id: 700, username: 'holder' }])
    const users = await userCount()
    const res = await post('createWithArray', [
      { username: 'before-clash' },
      { id: 700, username: 'clasher' },
      { username: 'after-clash' },
    ])
    expect(res.statusCode).toBe(409)
    expect(res.json()).toMatchObject({ code: 'user_id_taken', param: '[1].id' })
    expect(res.json().detail).toMatch(/^Item \[1\]: /)
    expect(await userCount()).toBe(users)
    expect((await get('before-clash')).statusCode).toBe(404)
  })

  it('takes at most 100 users (422 naming the body), and an empty list (200, nothing)', async () => {
    const users = await userCount()
    const many = Array.from({ length: 101 }, (_, i) => ({ username: `many-${i}` }))
    const res = await post('createWithArray', many)
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({ code: 'validation_failed', param: 'body' })
    expect(res.json().detail).toContain('at most 100')
    expect(await userCount()).toBe(users)
    const empty = await post('createWithArray', [])
    expect(empty.statusCode).toBe(200)
    expect(empty.json()).toEqual([])
    const notAList = await post('createWithArray', { username: 'x' })
    expect(notAList.statusCode).toBe(422)
    expect(notAList.json().param).toBe('body')
  })

  it('hashes at most 10 passwords in one request: more is a 422 naming the body, before any hashing', async () => {
    const users = await userCount()
    const started = passwordWork.started
    const eleven = Array.from({ length: 11 }, (_, i) => ({ username: `pw-${i}`, password: `secret-${i}` }))
    const res = await post('createWithArray', eleven)
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({ code: 'validation_failed', param: 'body' })
    expect(res.json().detail).toContain('at most 10 users with a password in one request (11 had one)')
    expect(passwordWork.started).toBe(started)
    expect(await userCount()).toBe(users)
    // Ten passwords among a hundred users is within the bound.
    const hundred = Array.from({ length: 100 }, (_, i) => ({
      username: `mixed-${i}`,
      ...(i % 10 === 0 ? { password: `secret-${i}` } : {}),
    }))
    const mixed = await post('createWithList', hundred)
    expect(mixed.statusCode, mixed.body).toBe(200)
    expect(passwordWork.started - started).toBe(10)
  })

  it('stops hashing a batch’s passwords once the client has gone, and creates none of its users', async () => {
    const other = await newClient(t)
    const otherToken = await accessToken(t.app, other)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as { port: number }
    const body = JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({ username: `gone-${i}`, password: `gone-secret-${i}` })),
    )
    const started = passwordWork.started
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.write(
      `POST /v2/user/createWithArray HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${otherToken}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    const party = { account: other.accountId }
    await waitUntil('the first password is being hashed', async () => passwordWork.load(party) > 0)
    const startedBeforeClosing = passwordWork.started
    socket.destroy()
    await waitUntil('the account has no password work left', async () => passwordWork.load(party) === 0)
    // The one running when the client left finishes; at most one more began as it was leaving.
    expect(passwordWork.started - startedBeforeClosing).toBeLessThanOrEqual(1)
    expect(passwordWork.started - started).toBeLessThan(10)
    expect(await userCount(other.accountId)).toBe(0)
  })

  it('creates 100 users in one request', async () => {
    const users = await userCount()
    const hundred = Array.from({ length: 100 }, (_, i) => ({ username: `hundred-${i}`, userStatus: i }))
    const res = await post('createWithList', hundred)
    expect(res.statusCode, res.body).toBe(200)
    expect(new Set(res.json().map((u: { id: number }) => u.id)).size).toBe(100)
    expect(await userCount()).toBe(users + 100)
  })

  it('replays a batch sent again with its Idempotency-Key, and refuses the key with other users (422)', async () => {
    const key = { 'idempotency-key': `batch-${Date.now()}` }
    const batch = [{ username: 'idem-a', password: 'first-pw' }]
    const first = await post('createWithArray', batch, token, key)
    const again = await post('createWithArray', batch, token, key)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    const other = await post('createWithArray', [{ username: 'idem-b' }], token, key)
    expect(other.statusCode).toBe(422)
    expect(other.json().code).toBe('idempotency_key_reused')
  })

  it('writes only in the caller’s account: another account’s batch with the same usernames leaves these alone', async () => {
    const b = await newClient(t)
    const bToken = await accessToken(t.app, b)
    const mine = (await get('createWithArray-a')).json()
    const res = await post('createWithArray', [{ username: 'createWithArray-a', firstName: 'B' }], bToken)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()[0].id).toBe(1)
    expect((await get('createWithArray-a')).json()).toEqual(mine)
    expect(await userCount(b.accountId)).toBe(1)
  })

  it('answers a body that is not JSON with 415', async () => {
    const res = await post('createWithArray', 'username=x', token, {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(res.statusCode).toBe(415)
  })
})
