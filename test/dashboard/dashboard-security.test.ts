import { expect, it } from 'vitest'
import { sha256Hex } from '../../src/lib/hash.ts'
import { nowIso } from '../../src/lib/time.ts'
import { recordAttempt } from '../../src/sign-in/attempts-repository.ts'
import { basic, createTestApp, useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

const PASSWORD = 'purple-otter-sings-42'
let n = 0
const uniqueEmail = (who: string) => `${who}-${++n}-${Date.now()}@example.com`

describeDb('dashboard security', () => {
  // app.inject's requests come from 127.0.0.1: that is the trusted proxy here.
  const t = useTestApp({ TRUST_PROXY: '127.0.0.1' })

  async function signedIn(address = '127.0.0.1'): Promise<{ client: SessionClient; email: string }> {
    const client = new SessionClient(t.app, address)
    const email = uniqueEmail('holder')
    const res = await client.signUp(email)
    expect(res.statusCode, res.body).toBe(303)
    return { client, email }
  }

  const createPet = (apiKey: string, name: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      headers: { authorization: basic(apiKey) },
      payload: { name },
    })

  it('never shows a Host or X-Forwarded-Host a request sends: its examples name PUBLIC_URL or the address it listens on', async () => {
    const { client } = await signedIn()
    await client.get('/dashboard/keys')
    const created = await client.post('/dashboard/keys', {
      name: 'host-check',
      expiry: 'never',
      scopes: ['read:pets', 'write:pets'],
    })
    const apiKey = /data-testid="new-key">([^<]+)</.exec(created.body)![1]!
    const pet = (await createPet(apiKey, 'Hosty')).json() as { id: number }
    const page = (url: string, app = t.app) =>
      app.inject({
        url,
        headers: {
          cookie: client.cookieHeader,
          host: 'evil.example',
          'x-forwarded-host': 'evil-proxy.example',
          'x-forwarded-proto': 'https',
        },
      })
    for (const url of ['/dashboard', `/dashboard/pets/${pet.id}`]) {
      const res = await page(url)
      expect(res.statusCode, url).toBe(200)
      expect(res.body, url).not.toContain('evil')
      // Not listening (app.inject): the configured port.
      expect(res.body, url).toContain('http://localhost:8080/v1/pet')
    }
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as { port: number }
    const live = await page('/dashboard')
    expect(live.body).not.toContain('evil')
    expect(live.body).toContain(`http://127.0.0.1:${port}/v1/pet`)
    // With PUBLIC_URL, that.
    const configured = await createTestApp({ PUBLIC_URL: 'https://pets.example.com' })
    try {
      const browser = new SessionClient(configured.app)
      browser.host = 'evil.example'
      expect((await browser.signUp(uniqueEmail('public-url'))).statusCode).toBe(303)
      const overview = await browser.get('/dashboard')
      expect(overview.body).not.toContain('evil')
      expect(overview.body).toContain('https://pets.example.com/v1/pet')
    } finally {
      await configured.close()
    }
  })

  it('refuses a form posted without the CSRF token, or with a forged one, and changes nothing', async () => {
    const { client } = await signedIn()
    await client.get('/dashboard/keys')
    const missing = await client.post('/dashboard/keys', { name: 'sneaky', expiry: 'never' }, { csrf: false })
    expect(missing.statusCode).toBe(403)
    expect(missing.body).toContain('This form has expired')
    const forged = await client.post(
      '/dashboard/keys',
      {
        _csrf: 'forged-token',
        name: 'sneaky',
        expiry: 'never',
        scopes: 'read:pets',
      },
      { csrf: false },
    )
    expect(forged.statusCode).toBe(403)
    const list = await client.get('/dashboard/keys')
    expect(list.body).not.toContain('sneaky')
    expect(list.body).toContain('No API keys yet')
  })

  it("refuses a CSRF token issued for another session, or before sign-in, even with that token's secret cookie", async () => {
    const a = await signedIn('10.0.9.1')
    const b = await signedIn('10.0.9.2')
    await a.client.get('/dashboard/keys')
    // A's token and A's secret cookie (as a cookie-tossing attacker would plant them), sent
    // with B's session.
    const tossed = await t.app.inject({
      method: 'POST',
      url: '/dashboard/keys',
      remoteAddress: '10.0.9.2',
      headers: {
        cookie: `_csrf=${a.client.cookies.get('_csrf')}; pet_session=${b.client.cookies.get('pet_session')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        _csrf: a.client.csrf,
        name: 'tossed',
        expiry: 'never',
        scopes: 'read:pets',
      }).toString(),
    })
    expect(tossed.statusCode).toBe(403)
    expect(tossed.body).toContain('This form has expired')
    expect((await b.client.get('/dashboard/keys')).body).not.toContain('tossed')

    // A token from the sign-in page, before signing in, is no good once signed in.
    const browser = new SessionClient(t.app, '10.0.9.3')
    await browser.get('/dashboard/sign-in')
    const before = browser.csrf
    expect(
      (await browser.post('/dashboard/sign-in', { email: b.email, password: PASSWORD })).statusCode,
    ).toBe(303)
    await browser.get('/dashboard/keys')
    const stale = await browser.post(
      '/dashboard/keys',
      { _csrf: before, name: 'stale', expiry: 'never', scopes: 'read:pets' },
      { csrf: false },
    )
    expect(stale.statusCode).toBe(403)
    // The page this session was just shown carries a token that works.
    await browser.get('/dashboard/keys')
    const fresh = await browser.post('/dashboard/keys', {
      name: 'fresh',
      expiry: 'never',
      scopes: 'read:pets',
    })
    expect(fresh.statusCode).toBe(200)
    expect((await b.client.get('/dashboard/keys')).body).not.toContain('stale')
  })

  it('refuses sign-in and sign-out posts without the CSRF token', async () => {
    const { client, email } = await signedIn()
    expect((await client.post('/dashboard/sign-out', {}, { csrf: false })).statusCode).toBe(403)
    expect((await client.get('/dashboard/keys')).statusCode).toBe(200)
    const stranger = new SessionClient(t.app)
    await stranger.get('/dashboard/sign-in')
    const res = await stranger.post('/dashboard/sign-in', { email, password: PASSWORD }, { csrf: false })
    expect(res.statusCode).toBe(403)
    expect(stranger.cookies.has('pet_session')).toBe(false)
  })

  it("never shows one account's keys or data to another account's session", async () => {
    const a = await signedIn()
    const keyA = await a.client.createKey('Alpha production key')
    const pet = (await createPet(keyA, 'Secret Squirrel')).json() as { id: number }
    const keyIdA = /data-key-id="(key_[^"]+)"/.exec((await a.client.get('/dashboard/keys')).body)?.[1]
    expect(keyIdA).toBeDefined()

    const b = await signedIn()
    for (const url of ['/dashboard', '/dashboard/keys', '/dashboard/pets', '/dashboard/users']) {
      const page = await b.client.get(url)
      expect(page.statusCode).toBe(200)
      expect(page.body).not.toContain('Alpha production key')
      expect(page.body).not.toContain('Secret Squirrel')
      expect(page.body).not.toContain(keyIdA)
      expect(page.body).not.toContain(`${keyA.slice(-4)}<`)
    }
    expect((await b.client.get(`/dashboard/pets/${pet.id}`)).statusCode).toBe(404)
    expect((await b.client.get(`/dashboard/keys/${keyIdA}/revoke`)).statusCode).toBe(404)
    await b.client.get('/dashboard/keys')
    const revoke = await b.client.post(`/dashboard/keys/${keyIdA}/revoke`, {})
    expect(revoke.statusCode).toBe(404)
    expect((await createPet(keyA, 'Still works')).statusCode).toBe(201)
    // And A still sees its own data.
    expect((await a.client.get(`/dashboard/pets/${pet.id}`)).body).toContain('Secret Squirrel')
  })

  /**
   * Earlier failures written straight into the attempts table, as the sign-in form records them
   * (each real one costs a scrypt hash); every test still makes real wrong attempts on top.
   */
  async function earlierFailures(count: number, attempt: { email: string | null; ip: string }) {
    for (let i = 0; i < count; i++) {
      await recordAttempt(t.database.db, { kind: 'sign_in', ...attempt, succeeded: false, at: nowIso() })
    }
  }

  it('rate limits wrong passwords per account, even from many addresses, refusing the right one too', async () => {
    const { email } = await signedIn()
    await earlierFailures(8, { email, ip: '10.0.1.1' })
    for (const address of ['10.0.1.2', '10.0.1.3']) {
      const res = await new SessionClient(t.app, address).signIn(email, 'wrong-password')
      expect(res.statusCode).toBe(401)
      expect(res.body).toContain('do not match')
    }
    const owner = new SessionClient(t.app, '10.0.2.1')
    const limited = await owner.signIn(email, PASSWORD)
    expect(limited.statusCode).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.body).toContain('Too many failed sign-in attempts')
    expect(owner.cookies.has('pet_session')).toBe(false)
  })

  it('rate limits wrong passwords per client address across accounts', async () => {
    const address = '10.0.3.1'
    await earlierFailures(18, { email: uniqueEmail('nobody'), ip: address })
    for (let i = 0; i < 2; i++) {
      const res = await new SessionClient(t.app, address).signIn(uniqueEmail('nobody'), 'wrong-password')
      expect(res.statusCode).toBe(401)
    }
    const { email } = await signedIn('10.0.3.2')
    expect((await new SessionClient(t.app, address).signIn(email, PASSWORD)).statusCode).toBe(429)
    expect((await new SessionClient(t.app, '10.0.3.3').signIn(email, PASSWORD)).statusCode).toBe(303)
  })

  it("restarts an account's count after a successful sign-in, so its owner's typos never add up", async () => {
    const { email } = await signedIn()
    for (let round = 0; round < 2; round++) {
      await earlierFailures(8, { email, ip: `10.0.4.${round + 1}` })
      expect((await new SessionClient(t.app, '10.0.4.9').signIn(email, 'typo-typo-typo')).statusCode).toBe(
        401,
      )
      expect((await new SessionClient(t.app, '10.0.4.9').signIn(email, PASSWORD)).statusCode).toBe(303)
    }
  })

  it('signs in with the right password, in a new HttpOnly SameSite=Lax session stored only as a hash', async () => {
    const { email } = await signedIn()
    const client = new SessionClient(t.app)
    await client.get('/dashboard/sign-in')
    const res = await client.post('/dashboard/sign-in', { email, password: PASSWORD })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/dashboard')
    const setCookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('pet_session='))
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    expect(setCookie).not.toMatch(/Secure/)
    const value = client.cookies.get('pet_session')!
    const rows = await t.database.db.selectFrom('dashboard_sessions').select('id_hash').execute()
    expect(rows.map((r) => r.id_hash)).toContain(sha256Hex(value))
    expect(rows.map((r) => r.id_hash)).not.toContain(value)
  })

  it('marks the session cookie Secure behind TLS (X-Forwarded-Proto: https from a trusted proxy)', async () => {
    const client = new SessionClient(t.app)
    const page = await client.get('/dashboard/sign-up')
    const res = await t.app.inject({
      method: 'POST',
      url: '/dashboard/sign-up',
      headers: {
        'x-forwarded-proto': 'https',
        cookie: client.cookieHeader,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        _csrf: client.csrf,
        email: uniqueEmail('tls'),
        password: PASSWORD,
      }).toString(),
    })
    expect(page.statusCode).toBe(200)
    expect(res.statusCode).toBe(303)
    const setCookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('pet_session='))
    expect(setCookie).toMatch(/; Secure/)
  })

  it('sends a strict CSP and security headers on dashboard pages only', async () => {
    const page = await new SessionClient(t.app).get('/dashboard/sign-in')
    const csp = String(page.headers['content-security-policy'])
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.body).not.toMatch(/<script>|style="|https?:\/\/(?!127)/)
    const api = await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(api.headers['content-security-policy']).toBeUndefined()
  })

  it('refuses weak passwords at sign-up and creates no account', async () => {
    const client = new SessionClient(t.app)
    const email = uniqueEmail('weak')
    for (const password of ['short', 'password123', '1234567890', 'aaaaaaaaaaaa']) {
      await client.get('/dashboard/sign-up')
      const res = await client.post('/dashboard/sign-up', { email, password })
      expect(res.statusCode).toBe(400)
    }
    const row = await t.database.db
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst()
    expect(row).toBeUndefined()
  })

  it('never redirects outside the service after sign-in', async () => {
    const { email } = await signedIn()
    const client = new SessionClient(t.app)
    await client.get('/dashboard/sign-in?next=//evil.example/steal')
    expect(client.lastPage).not.toContain('evil.example')
    const res = await client.post('/dashboard/sign-in', {
      email,
      password: PASSWORD,
      next: 'https://evil.example/',
    })
    expect(res.headers.location).toBe('/dashboard')
  })

  it('changing the password signs out every other session', async () => {
    const { client, email } = await signedIn()
    const other = new SessionClient(t.app)
    expect((await other.signIn(email, PASSWORD)).statusCode).toBe(303)
    await client.get('/dashboard/account')
    const res = await client.post('/dashboard/account/password', {
      current_password: PASSWORD,
      new_password: 'green-kettle-dances-77',
    })
    expect(res.statusCode).toBe(303)
    expect((await client.get('/dashboard/account')).statusCode).toBe(200)
    expect((await other.get('/dashboard/account')).statusCode).toBe(303)
    expect((await new SessionClient(t.app).signIn(email, 'green-kettle-dances-77')).statusCode).toBe(303)
  })

  it('rolls a key: the new one works, the old one expires at the chosen time', async () => {
    const { client } = await signedIn()
    const oldKey = await client.createKey('Rolling', ['read:pets', 'write:pets'])
    const keyId = /data-key-id="(key_[^"]+)"/.exec((await client.get('/dashboard/keys')).body)?.[1]
    await client.get(`/dashboard/keys/${keyId}/roll`)
    const rolled = await client.post(`/dashboard/keys/${keyId}/roll`, { expire: '1h' })
    const newKey = /data-testid="new-key">([^<]+)</.exec(rolled.body)?.[1]
    expect(newKey).toMatch(/^pet_sk_/)
    expect((await createPet(newKey!, 'From the new key')).statusCode).toBe(201)
    expect((await createPet(oldKey, 'From the old key')).statusCode).toBe(201)
    const old = await t.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId!)
      .executeTakeFirstOrThrow()
    const inAnHour = Date.parse(old.expires_at ?? '') - Date.now()
    expect(inAnHour).toBeGreaterThan(59 * 60_000)
    expect(inAnHour).toBeLessThanOrEqual(60 * 60_000)
    const fresh = await t.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', old.account_id)
      .where('id', '!=', keyId!)
      .executeTakeFirstOrThrow()
    expect(fresh).toMatchObject({ name: 'Rolling', scopes: 'read:pets write:pets', expires_at: null })

    // "Immediately" retires the old key at once.
    const newId = fresh.id
    await client.get(`/dashboard/keys/${newId}/roll`)
    await client.post(`/dashboard/keys/${newId}/roll`, { expire: 'now' })
    expect((await createPet(newKey!, 'Too late')).statusCode).toBe(401)
  })
})
