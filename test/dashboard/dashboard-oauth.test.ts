import { expect, it } from 'vitest'
import { nowIso } from '../../src/lib/time.ts'
import { recordAttempt } from '../../src/sign-in/attempts-repository.ts'
import { useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'
import { CookieJar, clientBasic, formBody, pathOf, pkcePair } from '../helpers/oauth.ts'

let n = 0
const PASSWORD = 'purple-otter-sings-42'

describeDb('dashboard OAuth apps', () => {
  const t = useTestApp()

  async function signedIn(): Promise<SessionClient> {
    const client = new SessionClient(t.app)
    expect((await client.signUp(`apps-${++n}-${Date.now()}@example.com`)).statusCode).toBe(303)
    return client
  }

  async function createApp(session: SessionClient, fields: Record<string, string | string[]> = {}) {
    await session.get('/dashboard/clients')
    const res = await session.post('/dashboard/clients', {
      name: 'Clinic sync',
      redirect_uris: '',
      scopes: ['read:pets', 'write:pets'],
      ...fields,
    })
    const id = /data-testid="client-id">([^<]+)</.exec(res.body)?.[1]
    const secret = /data-testid="client-secret">([^<]+)</.exec(res.body)?.[1]
    return { res, id: id ?? '', secret: secret ?? '' }
  }

  const token = (id: string, secret: string) => {
    const body = formBody({ grant_type: 'client_credentials', scope: 'read:pets' })
    return t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: body.payload,
      headers: { ...body.headers, authorization: clientBasic(id, secret) },
    })
  }

  it('creates an app whose secret is shown once and obtains tokens', async () => {
    const session = await signedIn()
    const app = await createApp(session)
    expect(app.res.statusCode).toBe(200)
    expect(app.res.headers['cache-control']).toBe('no-store')
    expect(app.secret).toMatch(/^pet_cs_/)
    expect((await token(app.id, app.secret)).statusCode).toBe(200)
    const list = await session.get('/dashboard/clients')
    expect(list.body).toContain(app.id)
    expect(list.body).not.toContain(app.secret)
  })

  it('refuses a redirect URI that is neither https nor localhost, naming it', async () => {
    const session = await signedIn()
    const app = await createApp(session, { redirect_uris: 'http://example.com/cb' })
    expect(app.res.statusCode).toBe(400)
    expect(app.res.body).toContain('must use https')
  })

  it('rotating the secret makes the old one fail and the new one work', async () => {
    const session = await signedIn()
    const app = await createApp(session)
    await session.get(`/dashboard/clients/${app.id}/rotate`)
    const rotated = await session.post(`/dashboard/clients/${app.id}/rotate`, {})
    const secret = /data-testid="client-secret">([^<]+)</.exec(rotated.body)?.[1] ?? ''
    expect(secret).not.toBe(app.secret)
    expect((await token(app.id, app.secret)).statusCode).toBe(401)
    expect((await token(app.id, secret)).statusCode).toBe(200)
  })

  it('deleting an app refuses its tokens', async () => {
    const session = await signedIn()
    const app = await createApp(session)
    const access = (await token(app.id, app.secret)).json() as { access_token: string }
    const before = await t.app.inject({
      url: '/v2/pet/findByStatus?status=available',
      headers: { authorization: `Bearer ${access.access_token}` },
    })
    expect(before.statusCode).toBe(200)
    await session.get(`/dashboard/clients/${app.id}/delete`)
    const deleted = await session.post(`/dashboard/clients/${app.id}/delete`, {})
    expect(deleted.headers.location).toBe('/dashboard/clients?notice=client_deleted')
    expect((await token(app.id, app.secret)).statusCode).toBe(401)
    const after = await t.app.inject({
      url: '/v2/pet/findByStatus?status=available',
      headers: { authorization: `Bearer ${access.access_token}` },
    })
    expect(after.statusCode).toBe(401)
  })

  it("never lets one account see, rotate or delete another account's app", async () => {
    const owner = await signedIn()
    const app = await createApp(owner)
    const other = await signedIn()
    expect((await other.get('/dashboard/clients')).body).not.toContain(app.id)
    expect((await other.get(`/dashboard/clients/${app.id}/rotate`)).statusCode).toBe(404)
    await other.get('/dashboard/clients')
    expect((await other.post(`/dashboard/clients/${app.id}/rotate`, {})).statusCode).toBe(404)
    await other.get('/dashboard/clients')
    expect((await other.post(`/dashboard/clients/${app.id}/delete`, {})).statusCode).toBe(404)
    expect((await token(app.id, app.secret)).statusCode).toBe(200)
  })

  it("limits wrong passwords on the OAuth sign-in page with the dashboard's budget", async () => {
    const email = `consent-${++n}-${Date.now()}@example.com`
    const owner = new SessionClient(t.app)
    await owner.signUp(email)
    const app = await createApp(owner, { redirect_uris: 'http://localhost:5555/callback' })
    for (let i = 0; i < 9; i++) {
      await recordAttempt(t.database.db, {
        kind: 'sign_in',
        email,
        ip: '10.9.0.1',
        succeeded: false,
        at: nowIso(),
      })
    }
    expect((await new SessionClient(t.app, '10.9.0.2').signIn(email, 'wrong-wrong-wrong')).statusCode).toBe(
      401,
    )
    const jar = new CookieJar()
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.id,
      redirect_uri: 'http://localhost:5555/callback',
      scope: 'read:pets',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })
    const start = await t.app.inject({ url: `/oauth/authorize?${query}` })
    jar.store(start.headers['set-cookie'])
    const signInUrl = pathOf(start.headers.location)
    const body = formBody({ email, password: PASSWORD })
    const res = await t.app.inject({
      method: 'POST',
      url: `${signInUrl}/login`,
      payload: body.payload,
      headers: { ...body.headers, cookie: jar.header() },
      remoteAddress: '10.9.1.1',
    })
    expect(res.statusCode).toBe(429)
    expect(res.body).toContain('Too many failed sign-in attempts')
  })

  it('refuses the app forms without a CSRF token', async () => {
    const session = await signedIn()
    const app = await createApp(session)
    await session.get('/dashboard/clients')
    const res = await session.post(`/dashboard/clients/${app.id}/delete`, {}, { csrf: false })
    expect(res.statusCode).toBe(403)
    expect((await token(app.id, app.secret)).statusCode).toBe(200)
  })
})
