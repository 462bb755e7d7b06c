import type { FastifyInstance } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { setAccountPassword } from '../../../src/accounts/accounts-repository.ts'
import { hashPassword } from '../../../src/accounts/passwords.ts'
import { openSandbox } from '../../../src/sandboxes/sandboxes-service.ts'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import {
  bearer,
  CookieJar,
  formBody,
  newClient,
  oauthClient,
  pathOf,
  pkcePair,
  type TestClient,
  tokenRequest,
} from '../../helpers/oauth.ts'

const REDIRECT = 'http://localhost:5555/callback'
const PASSWORD = 'correct horse battery staple'

/** A browser: follows the authorisation flow through sign-in and consent with app.inject. */
class Browser {
  readonly jar = new CookieJar()
  constructor(private readonly app: FastifyInstance) {}

  async request(method: 'GET' | 'POST', url: string, fields?: Record<string, string>) {
    const res = await this.app.inject({
      method,
      url,
      ...(fields === undefined ? { headers: { cookie: this.jar.header() } } : formBody(fields)),
      ...(fields === undefined
        ? {}
        : { headers: { ...formBody(fields).headers, cookie: this.jar.header() } }),
    })
    this.jar.store(res.headers['set-cookie'])
    return res
  }
}

function authorizeUrl(client: TestClient, challenge: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    scope: 'read:pets write:pets',
    state: 'state-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  })
  return `/oauth/authorize?${query}`
}

describeDb('OAuth authorization code + PKCE, end to end', () => {
  let client: TestClient
  let owner: { accountId: string; email: string }

  const t = useTestApp()
  beforeAll(async () => {
    const account = await t.newAccount()
    owner = account
    await setAccountPassword(
      t.database.db,
      account.accountId,
      await hashPassword(PASSWORD, { account: account.accountId }),
    )
    client = await newClient(t, { redirectUris: [REDIRECT], scopes: ['read:pets', 'write:pets'] })
  })

  let lastConsentPage = ''

  /** Sign-in and consent in a fresh browser; returns the redirect to the client. */
  async function authorize(
    challenge: string,
    decision: 'allow' | 'deny' = 'allow',
    wrongPasswordFirst = false,
  ) {
    const browser = new Browser(t.app)
    const start = await browser.request('GET', authorizeUrl(client, challenge))
    expect(start.statusCode, start.body).toBe(303)
    const signInUrl = pathOf(start.headers.location)
    expect(signInUrl).toMatch(/^\/oauth\/interaction\/[\w-]+$/)

    const signIn = await browser.request('GET', signInUrl)
    expect(signIn.statusCode).toBe(200)
    expect(signIn.headers['content-type']).toContain('text/html')
    expect(signIn.body).toContain('Test app')
    expect(signIn.body).toContain('name="password"')

    if (wrongPasswordFirst) {
      const wrong = await browser.request('POST', `${signInUrl}/login`, {
        email: owner.email,
        password: 'nope',
      })
      expect(wrong.statusCode).toBe(401)
      expect(wrong.body).toContain('do not match')
    }

    const signedIn = await browser.request('POST', `${signInUrl}/login`, {
      email: owner.email,
      password: PASSWORD,
    })
    expect(signedIn.statusCode).toBe(303)
    const resumed = await browser.request('GET', pathOf(signedIn.headers.location))
    expect(resumed.statusCode).toBe(303)
    const consentUrl = pathOf(resumed.headers.location)
    expect(consentUrl).toMatch(/^\/oauth\/interaction\//)

    const consent = await browser.request('GET', consentUrl)
    lastConsentPage = consent.body
    expect(consent.statusCode).toBe(200)
    expect(consent.body).toContain('read:pets')
    expect(consent.body).toContain('write:pets')
    expect(consent.body).toContain(owner.email)

    const decided = await browser.request(
      'POST',
      `${consentUrl}/${decision === 'allow' ? 'consent' : 'abort'}`,
      {},
    )
    expect(decided.statusCode).toBe(303)
    const done = await browser.request('GET', pathOf(decided.headers.location))
    expect(done.statusCode).toBe(303)
    return new URL(done.headers.location as string)
  }

  /** Trades an authorization code for tokens, with its PKCE verifier. */
  function exchange(code: string, verifier: string) {
    return tokenRequest(t.app, client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    })
  }

  async function codeFor(verifierChallenge: { challenge: string }, wrongPasswordFirst = false) {
    const back = await authorize(verifierChallenge.challenge, 'allow', wrongPasswordFirst)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(back.searchParams.get('state')).toBe('state-123')
    expect(back.searchParams.get('iss')).toBe('http://localhost:8080')
    const code = back.searchParams.get('code')
    expect(code).toBeTruthy()
    return code as string
  }

  it('signs in, asks consent, redirects with a code, exchanges it, calls the API, refreshes', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce, true)
    expect(lastConsentPage).not.toContain('sandbox-consent')

    const token = await tokenRequest(t.app, client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkce.verifier,
    })
    expect(token.statusCode, token.body).toBe(200)
    const tokens = token.json()
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'read:pets write:pets', expires_in: 3600 })
    expect(typeof tokens.refresh_token).toBe('string')

    // The token acts for the account that signed in, not for the client's owner.
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(tokens.access_token),
      payload: { name: 'Flow', photoUrls: [] },
    })
    expect(created.statusCode, created.body).toBe(200)
    const asOwner = await t.app.inject({
      method: 'GET',
      url: `/v1/pet/${created.json().id}`,
      headers: {
        authorization: `Basic ${Buffer.from(`${(owner as { apiKey?: string }).apiKey ?? ''}:`).toString('base64')}`,
      },
    })
    expect(asOwner.statusCode).toBe(200)

    const refreshed = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    expect(refreshed.statusCode, refreshed.body).toBe(200)
    const next = refreshed.json()
    expect(next.refresh_token).not.toBe(tokens.refresh_token)
    const read = await t.app.inject({
      method: 'GET',
      url: `/v2/pet/${created.json().id}`,
      headers: bearer(next.access_token),
    })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual({ id: created.json().id, name: 'Flow', photoUrls: [] })
  })

  it('stores authorization codes, refresh tokens and client secrets only as hashes', async () => {
    const dump = async () => {
      const store = await t.database.db.selectFrom('oauth_store').selectAll().execute()
      const clients = await t.database.db.selectFrom('oauth_clients').selectAll().execute()
      return JSON.stringify([store, clients])
    }
    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const withCode = await dump()
    expect(withCode).toContain('AuthorizationCode') // the code is stored, but not as itself
    expect(withCode).not.toContain(code)
    const tokens = (await exchange(code, pkce.verifier)).json()
    const refreshed = (
      await tokenRequest(t.app, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()
    const after = await dump()
    expect(after).toContain('RefreshToken')
    for (const secret of [code, tokens.refresh_token, refreshed.refresh_token, client.clientSecret]) {
      expect(after).not.toContain(secret)
    }
  })

  it('stores the browser session only under a hash of its cookie, at every step of the flow', async () => {
    const browser = new Browser(t.app)
    // The provider gives the session a new id when someone signs in: check every id it had.
    const sessions = new Set<string>()
    const step = async (method: 'GET' | 'POST', url: string, fields?: Record<string, string>) => {
      const res = await browser.request(method, url, fields)
      const session = browser.jar.value('_session')
      if (session !== undefined) sessions.add(session)
      const stored = JSON.stringify(await t.database.db.selectFrom('oauth_store').selectAll().execute())
      for (const id of sessions) expect(stored, `after ${method} ${url}`).not.toContain(id)
      return res
    }
    const start = await step('GET', authorizeUrl(client, pkcePair().challenge))
    const signInUrl = pathOf(start.headers.location)
    const signedIn = await step('POST', `${signInUrl}/login`, { email: owner.email, password: PASSWORD })
    const resumed = await step('GET', pathOf(signedIn.headers.location))
    const consentUrl = pathOf(resumed.headers.location)
    await step('GET', consentUrl)
    const decided = await step('POST', `${consentUrl}/consent`, {})
    const done = await step('GET', pathOf(decided.headers.location))
    expect(new URL(done.headers.location as string).searchParams.get('code')).toBeTruthy()
    expect(sessions.size).toBeGreaterThan(0)
    const models = await t.database.db.selectFrom('oauth_store').select('model').execute()
    expect(models.map((m) => m.model)).toContain('Session')

    // The session, found by its hash, lets the next authorization through without signing in.
    const again = await step('GET', authorizeUrl(client, pkcePair().challenge))
    expect(again.statusCode).toBe(303)
    const back = new URL(again.headers.location as string)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(back.searchParams.get('code')).toBeTruthy()
  })

  it('detects a reused refresh token and revokes the whole grant, access tokens included', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const first = (await exchange(code, pkce.verifier)).json()
    const second = (
      await tokenRequest(t.app, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token })
    ).json()
    expect(second.refresh_token).toBeTruthy()

    const reuse = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    })
    expect(reuse.statusCode).toBe(400)
    expect(reuse.json().error).toBe('invalid_grant')

    const afterReuse = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token,
    })
    expect(afterReuse.statusCode).toBe(400)
    expect(afterReuse.json().error).toBe('invalid_grant')
    for (const access of [first.access_token, second.access_token]) {
      const res = await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(access) })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
    }
  })

  it('introspects and revokes a refresh token; revoking it ends the grant and its access tokens', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const tokens = (await exchange(code, pkce.verifier)).json()
    const introspect = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/introspect',
        ...formBody({ token, client_id: client.clientId, client_secret: client.clientSecret }),
      })
    const active = await introspect(tokens.refresh_token)
    expect(active.statusCode).toBe(200)
    expect(active.json()).toMatchObject({ active: true, client_id: client.clientId, sub: owner.accountId })

    // Another client learns nothing about it and cannot revoke it.
    const stranger = await newClient(t)
    const asStranger = (path: string) =>
      t.app.inject({
        method: 'POST',
        url: path,
        ...formBody({
          token: tokens.refresh_token,
          client_id: stranger.clientId,
          client_secret: stranger.clientSecret,
        }),
      })
    expect((await asStranger('/oauth/introspect')).json()).toEqual({ active: false })
    expect((await asStranger('/oauth/revoke')).statusCode).toBe(200)
    expect((await introspect(tokens.refresh_token)).json().active).toBe(true)

    const revoke = await t.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      ...formBody({
        token: tokens.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    })
    expect(revoke.statusCode).toBe(200)
    expect((await introspect(tokens.refresh_token)).json()).toEqual({ active: false })
    const refresh = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    expect(refresh.json().error).toBe('invalid_grant')
    const call = await t.app.inject({
      method: 'GET',
      url: '/v2/store/inventory',
      headers: bearer(tokens.access_token),
    })
    expect(call.statusCode).toBe(401)
  })

  it('refuses refresh requests with an unknown token (invalid_grant), an unknown scope (invalid_scope), or another client (invalid_grant)', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const tokens = (await exchange(code, pkce.verifier)).json()
    const unknown = await tokenRequest(t.app, client, { grant_type: 'refresh_token', refresh_token: 'nope' })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toBe('invalid_grant')
    const badScope = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'read:pets admin',
    })
    expect(badScope.statusCode).toBe(400)
    expect(badScope.json().error).toBe('invalid_scope')
    const stranger = await newClient(t, { redirectUris: [REDIRECT] })
    const stolen = await tokenRequest(t.app, stranger, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    expect(stolen.statusCode, stolen.body).toBe(400)
    expect(stolen.json().error).toBe('invalid_grant')
    const narrower = await tokenRequest(t.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'read:pets',
    })
    expect(narrower.statusCode, narrower.body).toBe(200)
    expect(narrower.json().scope).toBe('read:pets')
  })

  it('refuses a token request without the PKCE verifier, or with a wrong one, with invalid_grant', async () => {
    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const missing = await tokenRequest(t.app, client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
    })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toBe('invalid_grant')
    const wrong = await tokenRequest(t.app, client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().error).toBe('invalid_grant')
  })

  it('refuses an unknown or already used code with invalid_grant', async () => {
    const unknown = await tokenRequest(t.app, client, {
      grant_type: 'authorization_code',
      code: 'not-a-code',
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toBe('invalid_grant')

    const pkce = pkcePair()
    const code = await codeFor(pkce)
    const fields = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkce.verifier,
    }
    expect((await tokenRequest(t.app, client, fields)).statusCode).toBe(200)
    const again = await tokenRequest(t.app, client, fields)
    expect(again.statusCode).toBe(400)
    expect(again.json().error).toBe('invalid_grant')
  })

  it('refuses an authorization request without a PKCE challenge (PKCE is required)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, '', { code_challenge: '' }).replace('&code_challenge=&', '&'),
    })
    expect(res.statusCode).toBe(303)
    const back = new URL(res.headers.location as string)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toMatch(/code_challenge/)
  })

  it('refuses the plain PKCE method', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, 'x'.repeat(43), { code_challenge_method: 'plain' }),
    })
    expect(res.statusCode).toBe(303)
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request')
  })

  it('answers an unknown scope with invalid_scope at the redirect URI', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, pkcePair().challenge, { scope: 'read:pets admin' }),
    })
    expect(res.statusCode).toBe(303)
    const back = new URL(res.headers.location as string)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(back.searchParams.get('error')).toBe('invalid_scope')
    expect(back.searchParams.get('state')).toBe('state-123')
  })

  it('answers a scope the client is not registered for with invalid_scope', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, pkcePair().challenge, { scope: 'write:users' }),
    })
    expect(res.statusCode).toBe(303)
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_scope')
  })

  it('never redirects to an unregistered redirect URI', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, pkcePair().challenge, { redirect_uri: 'https://evil.example/cb' }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('redirect_uri')
  })

  it('redirects with access_denied when the account holder denies', async () => {
    const back = await authorize(pkcePair().challenge, 'deny')
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('state-123')
  })

  it("gives a sandbox app's code-flow token the signed-in account's sandbox, never its live data", async () => {
    const liveClient = client
    const developer = await t.newAccount()
    const sandboxOfDeveloper = (await openSandbox(t.database.db, developer.accountId)).sandbox.id
    try {
      client = {
        ...(await oauthClient(t.database.db, {
          accountId: sandboxOfDeveloper,
          redirectUris: [REDIRECT],
          scopes: ['read:pets', 'write:pets'],
        })),
        accountId: sandboxOfDeveloper,
        email: developer.email,
        apiKey: developer.apiKey,
      }
      // The owner has no sandbox yet: the code is refused, no token reaches live data.
      const first = pkcePair()
      const refused = await exchange(await codeFor(first), first.verifier)
      expect(lastConsentPage).toContain('data-testid="sandbox-consent"')
      expect(refused.statusCode).toBe(400)
      expect(refused.json().error).toBe('invalid_grant')

      const ownerSandbox = (await openSandbox(t.database.db, owner.accountId)).sandbox.id
      const pkce = pkcePair()
      const token = await exchange(await codeFor(pkce), pkce.verifier)
      expect(token.statusCode, token.body).toBe(200)
      const claims = JSON.parse(Buffer.from(token.json().access_token.split('.')[1], 'base64url').toString())
      expect(claims).toMatchObject({ account_id: ownerSandbox, mode: 'sandbox' })
    } finally {
      client = liveClient
    }
  })
})
