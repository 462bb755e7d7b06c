import { Writable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, formBody, newClient, type TestClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

const APP = 'https://app.example.com'
const OTHER = 'https://evil.example.net'

function basic(key: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` }
}

function preflight(method: string, headers = 'authorization, content-type') {
  return { 'access-control-request-method': method, 'access-control-request-headers': headers }
}

/** The OAuth provider's endpoints, in the spellings a client may send (its router ignores case and trailing slashes). */
const OAUTH_SPELLINGS = ['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/jwks'].flatMap(
  (path) => [path, path.toUpperCase().replace('/OAUTH', '/oauth'), `${path}/`, `${path}//`],
)

/**
 * Every request a page of `origin` might make to the OAuth provider, the failures included (a
 * client that is unknown or sends a wrong secret), and its preflight; each answer, by request.
 */
async function oauthAnswers(t: TestApp, client: TestClient, origin: string) {
  const wrong = `Basic ${Buffer.from(`${client.clientId}:wrong-secret`).toString('base64')}`
  const unknown = `Basic ${Buffer.from('pet_ci_unknown:wrong-secret').toString('base64')}`
  const answers: [string, Awaited<ReturnType<TestApp['app']['inject']>>][] = []
  for (const url of OAUTH_SPELLINGS) {
    const isKeys = url.toLowerCase().includes('jwks')
    const body = formBody(
      url.toLowerCase().includes('token') ? { grant_type: 'client_credentials' } : { token: 'not-a-token' },
    )
    for (const authorization of isKeys ? [undefined] : [wrong, unknown, undefined]) {
      const res = await t.app.inject({
        method: isKeys ? 'GET' : 'POST',
        url,
        headers: {
          origin,
          ...(isKeys ? {} : body.headers),
          ...(authorization === undefined ? {} : { authorization }),
        },
        ...(isKeys ? {} : { payload: body.payload }),
      })
      answers.push([
        `${isKeys ? 'GET' : 'POST'} ${url} (${authorization === wrong ? 'wrong secret' : authorization === unknown ? 'unknown client' : 'no credentials'})`,
        res,
      ])
    }
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url,
      headers: { origin, ...preflight(isKeys ? 'GET' : 'POST', 'content-type') },
    })
    answers.push([`OPTIONS ${url}`, pre])
  }
  return answers
}

describeDb('CORS (CORS_ORIGINS)', () => {
  let t: TestApp
  let key: string
  let client: TestClient

  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: `${APP},http://localhost:5173`, RATE_LIMIT_RPS: '100' })
    key = (await t.newAccount()).apiKey
    client = await newClient(t, { scopes: ['read:pets', 'write:pets'] })
  })
  afterAll(async () => t.close())

  it('answers a preflight from an allowed origin with 204, before authentication', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pet',
      headers: { origin: APP, ...preflight('POST', 'authorization, content-type, idempotency-key') },
    })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/\bPATCH\b.*\bDELETE\b/)
    const allowHeaders = String(res.headers['access-control-allow-headers']).toLowerCase()
    for (const header of ['authorization', 'content-type', 'idempotency-key', 'if-match', 'api_key']) {
      expect(allowHeaders).toContain(header)
    }
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0)
    expect(res.headers.vary).toMatch(/origin/i)
    expect(res.headers['request-id']).toMatch(/^req_/)
  })

  it('answers preflights on every path of both APIs, the other allowed origin too', async () => {
    for (const url of ['/v1/pet/1', '/v2/pet', '/v2/pet/7', '/v1/user?limit=2', '/v2/store/inventory']) {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'http://localhost:5173', ...preflight('PUT') },
      })
      expect(res.statusCode, url).toBe(204)
      expect(res.headers['access-control-allow-origin'], url).toBe('http://localhost:5173')
    }
  })

  it('lets an allowed origin read the answer and the headers a client needs', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      headers: { origin: APP, ...basic(key) },
      payload: { name: 'Rex' },
    })
    expect(created.statusCode).toBe(201)
    expect(created.headers['access-control-allow-origin']).toBe(APP)
    const exposed = String(created.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)
    for (const header of [
      'request-id',
      'etag',
      'location',
      'ratelimit',
      'ratelimit-policy',
      'retry-after',
      'x-rate-limit',
      'x-expires-after',
    ]) {
      expect(exposed).toContain(header)
    }
    // Every header the answer carries that a script needs is among those exposed.
    for (const header of ['request-id', 'etag', 'location', 'ratelimit', 'ratelimit-policy']) {
      expect(created.headers[header], header).toBeDefined()
    }
  })

  it('gives errors the CORS headers too, so a page can read the problem', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/pet', headers: { origin: APP } })
    expect(res.statusCode).toBe(401)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
  })

  it('gives another origin no CORS headers and otherwise the same answer', async () => {
    const get = await t.app.inject({
      method: 'GET',
      url: '/v1/pet',
      headers: { origin: OTHER, ...basic(key) },
    })
    expect(get.statusCode).toBe(200)
    expect(get.headers['access-control-allow-origin']).toBeUndefined()
    expect(get.headers['access-control-expose-headers']).toBeUndefined()
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pet',
      headers: { origin: OTHER, ...preflight('POST') },
    })
    expect(pre.statusCode).toBe(405)
    expect(pre.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(pre.headers['access-control-allow-origin']).toBeUndefined()
    // An origin that merely begins like an allowed one is another origin.
    const lookalike = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pet',
      headers: { origin: `${APP}.evil.net`, ...preflight('POST') },
    })
    expect(lookalike.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('leaves an OPTIONS that is not a preflight to the 405 with Allow', async () => {
    for (const headers of [{}, { origin: APP }]) {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/v1/pet', headers })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow).toContain('POST')
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    }
    const unknown = await t.app.inject({ method: 'OPTIONS', url: '/nowhere', headers: {} })
    expect(unknown.statusCode).toBe(404)
  })

  it('keeps the dashboard and the OAuth sign-in pages same-origin', async () => {
    for (const url of ['/dashboard', '/dashboard/sign-in', '/oauth/authorize', '/oauth/interaction/abc']) {
      const get = await t.app.inject({ method: 'GET', url, headers: { origin: APP } })
      expect(get.headers['access-control-allow-origin'], url).toBeUndefined()
      const pre = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: APP, ...preflight('POST') },
      })
      expect(pre.statusCode, url).not.toBe(204)
      expect(pre.headers['access-control-allow-origin'], url).toBeUndefined()
    }
  })

  it('answers the token endpoint from an allowed origin, and refuses another origin there', async () => {
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/oauth/token',
      headers: { origin: APP, ...preflight('POST', 'content-type') },
    })
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe(APP)

    const body = formBody({ grant_type: 'client_credentials', scope: 'read:pets' })
    const ok = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: body.payload,
      headers: {
        ...body.headers,
        origin: APP,
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
    })
    expect(ok.statusCode).toBe(200)
    expect(ok.headers['access-control-allow-origin']).toBe(APP)
    expect(ok.headers.vary).toMatch(/origin/i)

    const other = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: body.payload,
      headers: {
        ...body.headers,
        origin: OTHER,
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
    })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    expect(other.json()).toMatchObject({ error: 'invalid_request' })
  })

  it('gives another origin no CORS headers from the OAuth provider, at any spelling, failed authentication included', async () => {
    for (const [what, res] of await oauthAnswers(t, client, OTHER)) {
      expect(res.statusCode, what).toBeLessThan(500)
      expect(res.headers['access-control-allow-origin'], what).toBeUndefined()
      expect(res.headers['access-control-expose-headers'], what).toBeUndefined()
    }
  })

  it('lets an allowed origin read the v2 answers with a bearer token, and the metadata', async () => {
    const token = await accessToken(t.app, client, 'read:pets write:pets')
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: { origin: APP, ...bearer(token) },
      payload: { name: 'doggie', photoUrls: [] },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    for (const url of ['/.well-known/oauth-authorization-server', '/oauth/jwks', '/openapi.json']) {
      const doc = await t.app.inject({ method: 'GET', url, headers: { origin: APP } })
      expect(doc.statusCode, url).toBe(200)
      expect(doc.headers['access-control-allow-origin'], url).toBe(APP)
    }
  })
})

describeDb('CORS when CORS_ORIGINS is unset', () => {
  let t: TestApp
  const log: Record<string, unknown>[] = []
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) log.push(JSON.parse(line))
        done()
      },
    })
    t = await createTestApp({}, { logger: { level: 'warn', stream } })
  })
  afterAll(async () => t.close())

  it('gives no origin CORS headers from the OAuth provider, at any spelling, failed authentication included', async () => {
    const client = await newClient(t)
    for (const [what, res] of await oauthAnswers(t, client, APP)) {
      expect(res.statusCode, what).toBeLessThan(500)
      expect(res.headers['access-control-allow-origin'], what).toBeUndefined()
      expect(res.headers['access-control-expose-headers'], what).toBeUndefined()
    }
  })

  it('answers a cross-origin preflight with a problem that says to set CORS_ORIGINS, and logs it once', async () => {
    for (const url of ['/v1/pet', '/v2/pet/1', '/oauth/token', '/openapi.json']) {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: APP, ...preflight('POST') },
      })
      expect(res.statusCode, url).toBe(403)
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/)
      expect(res.json(), url).toMatchObject({ code: 'cors_not_enabled' })
      expect(res.json().detail, url).toContain('CORS_ORIGINS')
      expect(res.json().detail, url).toContain(APP)
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined()
    }
    await waitUntil('the warning is logged', async () =>
      log.some((l) => String(l.msg).includes('CORS_ORIGINS')),
    )
    expect(log.filter((l) => String(l.msg).includes('CORS_ORIGINS'))).toHaveLength(1)
    // An OPTIONS that is not a preflight, or a preflight to the dashboard, is no CORS matter.
    expect((await t.app.inject({ method: 'OPTIONS', url: '/v1/pet' })).statusCode).toBe(405)
    const dashboard = await t.app.inject({
      method: 'OPTIONS',
      url: '/dashboard/sign-in',
      headers: { origin: APP, ...preflight('POST') },
    })
    expect(dashboard.statusCode).not.toBe(403)
  })

  it('sends no CORS headers and answers no preflight', async () => {
    const key = (await t.newAccount()).apiKey
    const get = await t.app.inject({ method: 'GET', url: '/v1/pet', headers: { origin: APP, ...basic(key) } })
    expect(get.statusCode).toBe(200)
    expect(get.headers['access-control-allow-origin']).toBeUndefined()
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pet',
      headers: { origin: APP, ...preflight('GET') },
    })
    expect(pre.statusCode).toBe(403)
    expect(pre.headers['access-control-allow-origin']).toBeUndefined()
  })
})
