import { beforeAll, expect, it } from 'vitest'
import { setAccountPassword } from '../../../src/accounts/accounts-repository.ts'
import { hashPassword } from '../../../src/accounts/passwords.ts'
import { createPublicClient, rotateClientSecret } from '../../../src/oauth/clients-service.ts'
import { useTestApp } from '../../helpers/app.ts'
import { runPetService } from '../../helpers/cli.ts'
import { SessionClient } from '../../helpers/dashboard-session.ts'
import { describeDb } from '../../helpers/database.ts'
import { bearer, CookieJar, clientBasic, formBody, pathOf, pkcePair } from '../../helpers/oauth.ts'

const REDIRECT = 'http://localhost:5555/callback'
const APP_ORIGIN = 'http://localhost:5555'
const PASSWORD = 'correct horse battery staple'

describeDb('public OAuth clients (no secret, PKCE)', () => {
  let owner: { accountId: string; email: string; apiKey: string }
  let clientId: string

  const t = useTestApp({ CORS_ORIGINS: APP_ORIGIN })
  beforeAll(async () => {
    owner = await t.newAccount()
    await setAccountPassword(
      t.database.db,
      owner.accountId,
      await hashPassword(PASSWORD, { account: owner.accountId }),
    )
    const { info } = await createPublicClient(t.database.db, {
      accountId: owner.accountId,
      name: 'Browser app',
      scopes: ['read:pets', 'write:pets'],
      redirectUris: [REDIRECT],
    })
    clientId = info.client_id
  })

  /** Sign-in and consent through app.inject, as a browser would; returns the authorization code. */
  async function codeFor(challenge: string): Promise<string> {
    const jar = new CookieJar()
    const go = async (method: 'GET' | 'POST', url: string, fields?: Record<string, string>) => {
      const body = fields === undefined ? undefined : formBody(fields)
      const res = await t.app.inject({
        method,
        url,
        ...(body === undefined ? {} : { payload: body.payload }),
        headers: { ...(body?.headers ?? {}), cookie: jar.header() },
      })
      jar.store(res.headers['set-cookie'])
      return res
    }
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'read:pets write:pets',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const start = await go('GET', `/oauth/authorize?${query}`)
    expect(start.statusCode, start.body).toBe(303)
    const signIn = pathOf(start.headers.location)
    await go('GET', signIn)
    const signedIn = await go('POST', `${signIn}/login`, { email: owner.email, password: PASSWORD })
    expect(signedIn.statusCode).toBe(303)
    const consent = pathOf((await go('GET', pathOf(signedIn.headers.location))).headers.location)
    await go('GET', consent)
    const decided = await go('POST', `${consent}/consent`, {})
    const done = await go('GET', pathOf(decided.headers.location))
    const back = new URL(done.headers.location as string)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    return back.searchParams.get('code') as string
  }

  function token(fields: Record<string, string>, headers: Record<string, string> = {}) {
    const body = formBody(fields)
    return t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: body.payload,
      headers: { ...body.headers, ...headers },
    })
  }

  it('stores no secret, and has none to rotate', async () => {
    const row = await t.database.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({ client_type: 'public', secret_hash: '' })
    expect(await rotateClientSecret(t.database.db, owner.accountId, clientId)).toBeUndefined()
  })

  it('runs the code flow with PKCE and only its client_id, from an allowed origin; refresh tokens rotate', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce.challenge)
    const exchanged = await token(
      {
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: REDIRECT,
        code_verifier: pkce.verifier,
      },
      { origin: APP_ORIGIN },
    )
    expect(exchanged.statusCode, exchanged.body).toBe(200)
    expect(exchanged.headers['access-control-allow-origin']).toBe(APP_ORIGIN)
    const tokens = exchanged.json() as { access_token: string; refresh_token: string; scope: string }
    expect(tokens.scope).toBe('read:pets write:pets')
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(tokens.access_token),
      payload: { name: 'From a browser', photoUrls: [] },
    })
    expect(created.statusCode, created.body).toBe(200)

    const refreshed = await token({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: tokens.refresh_token,
    })
    expect(refreshed.statusCode, refreshed.body).toBe(200)
    const next = refreshed.json() as { access_token: string; refresh_token: string }
    expect(next.refresh_token).not.toBe(tokens.refresh_token)

    // The old refresh token used again: a stolen copy. The whole grant is revoked.
    const reused = await token({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: tokens.refresh_token,
    })
    expect(reused.statusCode).toBe(400)
    expect(reused.json()).toMatchObject({ error: 'invalid_grant' })
    const afterReuse = await token({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: next.refresh_token,
    })
    expect(afterReuse.json()).toMatchObject({ error: 'invalid_grant' })
    const read = await t.app.inject({
      method: 'GET',
      url: `/v2/pet/${created.json().id}`,
      headers: bearer(next.access_token),
    })
    expect(read.statusCode).toBe(401)
  })

  it('refuses a code exchange without the PKCE verifier, or with a wrong one', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce.challenge)
    const without = await token({
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      redirect_uri: REDIRECT,
    })
    expect(without.statusCode).toBe(400)
    const wrong = await token({
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('refuses client credentials, a secret it does not have, and introspection; lets it revoke its tokens', async () => {
    const cc = await token({ grant_type: 'client_credentials', client_id: clientId })
    expect(cc.statusCode).toBe(400)
    expect(cc.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('not allowed for this client'),
    })

    const withSecret = await token(
      { grant_type: 'client_credentials' },
      { authorization: clientBasic(clientId, 'pet_cs_guessed') },
    )
    expect(withSecret.statusCode).toBe(401)
    expect(withSecret.json()).toMatchObject({ error: 'invalid_client' })

    const pkce = pkcePair()
    const code = await codeFor(pkce.challenge)
    const tokens = (
      await token({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: REDIRECT,
        code_verifier: pkce.verifier,
      })
    ).json() as { access_token: string; refresh_token: string }

    const introspect = formBody({ token: tokens.access_token, client_id: clientId })
    const inspected = await t.app.inject({
      method: 'POST',
      url: '/oauth/introspect',
      payload: introspect.payload,
      headers: introspect.headers,
    })
    expect(inspected.statusCode).toBe(401)
    expect(inspected.json()).toMatchObject({ error: 'invalid_client' })

    for (const value of [tokens.access_token, tokens.refresh_token]) {
      const body = formBody({ token: value, client_id: clientId })
      const revoked = await t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        payload: body.payload,
        headers: body.headers,
      })
      expect(revoked.statusCode, revoked.body).toBe(200)
    }
    const read = await t.app.inject({
      method: 'GET',
      url: '/v2/pet/findByStatus?status=available',
      headers: bearer(tokens.access_token),
    })
    expect(read.statusCode).toBe(401)
    const refreshed = await token({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: tokens.refresh_token,
    })
    expect(refreshed.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('says public clients need no secret in the server metadata', async () => {
    const metadata = (
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    ).json()
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none')
    expect(metadata.revocation_endpoint_auth_methods_supported).toContain('none')
    expect(metadata.introspection_endpoint_auth_methods_supported).not.toContain('none')
  })

  it('is made by the admin CLI with --public, which shows no secret and needs a redirect URI', async () => {
    const env = { DATABASE_URL: t.database.url }
    const made = await runPetService(
      ['clients', 'create', '--account', 'spa@example.com', '--public', '--redirect-uri', REDIRECT, '--json'],
      env,
    )
    expect(made.code, made.stderr).toBe(0)
    const out = JSON.parse(made.stdout)
    expect(out).toMatchObject({ client_type: 'public', grant_types: ['authorization_code', 'refresh_token'] })
    expect(out.client_secret).toBeUndefined()
    expect(made.stdout).not.toContain('pet_cs_')
    const text = await runPetService(
      ['clients', 'create', '--account', 'spa@example.com', '--public', '--redirect-uri', REDIRECT],
      env,
    )
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain('no secret')
    expect(text.stdout).not.toContain('pet_cs_')
    const listed = await runPetService(['clients', 'list', '--account', 'spa@example.com'], env)
    expect(listed.stdout).toContain(`${out.client_id}  OAuth client  public`)
    const refused = await runPetService(
      ['clients', 'create', '--account', 'spa@example.com', '--public'],
      env,
    )
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--redirect-uri')
  }, 180_000)

  it('is made from the dashboard form, shown without a secret, and has no secret to rotate there', async () => {
    const session = new SessionClient(t.app)
    expect((await session.signUp(`public-${Date.now()}@example.com`)).statusCode).toBe(303)
    await session.get('/dashboard/clients')
    const noRedirect = await session.post('/dashboard/clients', {
      name: 'SPA',
      redirect_uris: '',
      scopes: ['read:pets'],
      public: '1',
    })
    expect(noRedirect.statusCode).toBe(400)
    expect(noRedirect.body).toContain('redirect URI')
    const made = await session.post('/dashboard/clients', {
      name: 'SPA',
      redirect_uris: REDIRECT,
      scopes: ['read:pets'],
      public: '1',
    })
    expect(made.statusCode).toBe(200)
    const id = /data-testid="client-id">([^<]+)</.exec(made.body)?.[1] ?? ''
    expect(id).toMatch(/^pet_ci_/)
    expect(made.body).not.toContain('data-testid="client-secret"')
    expect(made.body).not.toContain('pet_cs_')
    expect(made.body).toContain('code_verifier')
    const list = await session.get('/dashboard/clients')
    expect(list.body).toContain(id)
    expect(list.body).not.toContain(`/dashboard/clients/${id}/rotate`)
    expect((await session.get(`/dashboard/clients/${id}/rotate`)).statusCode).toBe(404)
    await session.get('/dashboard/clients')
    expect((await session.post(`/dashboard/clients/${id}/rotate`, {})).statusCode).toBe(404)
  })
})
