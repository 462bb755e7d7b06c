import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient } from '../../helpers/oauth.ts'

describeDb('v2 login and logout (the Petstore’s /user/login, /user/logout)', () => {
  let token: string
  let otherToken: string

  /** Each test logs in from an address of its own: failed logins are also counted per address. */
  const login = (username: string, password: string, address: string, auth = token) =>
    t.app.inject({
      method: 'GET',
      url: `/v2/user/login?username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`,
      headers: bearer(auth),
      remoteAddress: address,
    })

  const t = useTestApp({ RATE_LIMIT_RPS: '50' })
  beforeAll(async () => {
    token = await accessToken(t.app, await newClient(t))
    otherToken = await accessToken(t.app, await newClient(t))
    for (const [username, password] of [
      ['alice', 'alice-password'],
      ['bob', 'bob-password'],
      ['carol', 'carol-password'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/user',
        headers: bearer(token),
        payload: { username, password },
      })
      expect(res.statusCode, res.body).toBe(200)
    }
    await t.app.inject({
      method: 'POST',
      url: '/v2/user',
      headers: bearer(token),
      payload: { username: 'nopass' },
    })
  })

  it('answers the right password with 200, a session string, X-Rate-Limit and X-Expires-After', async () => {
    const before = Date.now()
    const res = await login('alice', 'alice-password', '10.50.0.1')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['content-type']).toContain('application/json')
    const session = res.json()
    expect(typeof session).toBe('string')
    expect(session).toMatch(/^logged in user session:[0-9A-Za-z]{24}$/)
    // RATE_LIMIT_RPS=50 is 180,000 calls an hour.
    expect(res.headers['x-rate-limit']).toBe('180000')
    const expires = Date.parse(String(res.headers['x-expires-after']))
    expect(String(res.headers['x-expires-after'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000 - 1000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000)
    // Every login answers a new, unrelated string.
    expect((await login('alice', 'alice-password', '10.50.0.1')).json()).not.toBe(session)
  })

  it('answers a wrong password, an unknown username and a user without a password alike: 400 "Invalid username/password supplied"', async () => {
    for (const [username, password] of [
      ['alice', 'wrong-password'],
      ['nobody', 'alice-password'],
      ['nopass', ''],
      ['nopass', 'anything'],
    ] as const) {
      const res = await login(username, password, '10.50.0.2')
      expect(res.statusCode, `${username}/${password}`).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json()).toMatchObject({ code: 'login_failed', title: 'Invalid username/password supplied' })
      if (password !== '') expect(res.body).not.toContain(password)
    }
  })

  it('checks the password of the caller’s account’s user only: another account cannot log in as alice', async () => {
    const res = await login('alice', 'alice-password', '10.50.0.3', otherToken)
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('login_failed')
  })

  it('refuses a login without username or password (400 naming it)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v2/user/login?username=alice',
      headers: bearer(token),
      remoteAddress: '10.50.0.4',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_missing', param: 'password' })
  })

  it('after 10 failed logins for a username answers 429 with Retry-After, even to the right password; other usernames still log in', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await login('bob', `guess-${i}`, '10.50.0.5')).statusCode).toBe(400)
    }
    const limited = await login('bob', 'bob-password', '10.50.0.6')
    expect(limited.statusCode).toBe(429)
    expect(limited.json().code).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await login('carol', 'carol-password', '10.50.0.6')).statusCode).toBe(200)
  }, 60_000)

  it('after 20 failed logins from one address answers it 429, whichever username', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await login(`guess-${i}`, 'x', '10.50.0.7')).statusCode).toBe(400)
    }
    expect((await login('carol', 'carol-password', '10.50.0.7')).statusCode).toBe(429)
    expect((await login('carol', 'carol-password', '10.50.0.8')).statusCode).toBe(200)
  }, 60_000)

  it('keeps the user logins’ budgets apart from the dashboard’s sign-in', async () => {
    const attempts = await t.database.db
      .selectFrom('sign_in_attempts')
      .select(['kind', 'email'])
      .where('ip', '=', '10.50.0.5')
      .execute()
    expect(attempts.length).toBeGreaterThan(0)
    for (const a of attempts) expect(a.kind).toBe('user_login')
  })

  it('logs out (200, the Petstore’s ApiResponse)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/user/logout', headers: bearer(token) })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ code: 200, type: 'unknown', message: 'ok' })
  })
})
