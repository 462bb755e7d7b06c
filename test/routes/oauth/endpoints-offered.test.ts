import { expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { formBody } from '../../helpers/oauth.ts'

/**
 * Under /oauth the service offers the endpoints docs/oauth.md lists (authorize, token, revoke,
 * introspect, jwks) and the sign-in and consent pages; nothing else of oidc-provider's, which
 * would otherwise answer OpenID discovery, userinfo and logout pages, in any letter case.
 */
const NOT_OFFERED: [method: 'GET' | 'POST', path: string][] = [
  ['GET', '/oauth'],
  ['GET', '/oauth/'],
  ['GET', '/oauth/nope'],
  ['GET', '/oauth/.well-known/openid-configuration'],
  ['GET', '/oauth/.well-known/oauth-authorization-server'],
  ['GET', '/oauth/me'],
  ['POST', '/oauth/me'],
  ['GET', '/oauth/session/end'],
  ['POST', '/oauth/session/end'],
  ['POST', '/oauth/session/end/confirm'],
  ['GET', '/oauth/session/end/success'],
  ['POST', '/oauth/reg'],
  ['POST', '/oauth/request'],
  ['POST', '/oauth/device/auth'],
  ['GET', '/oauth/JWKS'],
  ['GET', '/oauth/jwks//'],
  ['GET', '/oauth/Authorize'],
  ['POST', '/oauth/TOKEN'],
  ['GET', '/oauth/interaction/none/such'],
  ['GET', '/oauth/INTERACTION/abc'],
]

describeDb('OAuth: only the endpoints we document answer under /oauth', () => {
  const t = useTestApp()

  const rows = async () => (await t.database.db.selectFrom('oauth_store').select('id').execute()).length

  it('answers every other path under /oauth with our 404 problem, and stores nothing', async () => {
    const before = await rows()
    for (const [method, url] of NOT_OFFERED) {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? formBody({ a: 'b' }) : {}) })
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(404)
      expect(res.headers['content-type'], `${method} ${url}`).toContain('application/problem+json')
      expect(res.json(), `${method} ${url}`).toMatchObject({ status: 404, code: 'not_found' })
      expect(res.headers['set-cookie'], `${method} ${url}`).toBeUndefined()
    }
    expect(await rows()).toBe(before)
  })

  it('answers a method an endpoint does not take with a 405 problem naming the ones it does', async () => {
    const cases = [
      ['GET', '/oauth/token', 'POST'],
      ['GET', '/oauth/revoke', 'POST'],
      ['PUT', '/oauth/introspect', 'POST'],
      ['POST', '/oauth/jwks', 'GET, HEAD'],
      ['DELETE', '/oauth/authorize', 'GET, HEAD'],
    ] as const
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({ method, url })
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(405)
      expect(res.headers.allow, `${method} ${url}`).toBe(allow)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json()).toMatchObject({ code: 'method_not_allowed' })
    }
  })

  it('keeps the RFC 6749 JSON shape for protocol errors of the endpoints themselves', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/oauth/token', ...formBody({}) })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.json()).toMatchObject({ error: 'invalid_request' })
  })

  it('publishes metadata naming only what the service offers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(res.statusCode).toBe(200)
    const metadata = res.json() as Record<string, unknown>
    for (const field of [
      'userinfo_endpoint',
      'end_session_endpoint',
      'registration_endpoint',
      'claims_supported',
      'id_token_signing_alg_values_supported',
      'subject_types_supported',
    ]) {
      expect(metadata[field], field).toBeUndefined()
    }
    const endpoints = Object.entries(metadata)
      .filter(([key]) => key.endsWith('_endpoint') || key === 'jwks_uri')
      .map(([, value]) => value)
    for (const endpoint of endpoints) {
      const { pathname } = new URL(String(endpoint))
      const res = await t.app.inject({ method: 'OPTIONS', url: pathname })
      // Every endpoint it names exists (a 405 for OPTIONS, never a 404).
      expect(res.statusCode, pathname).toBe(405)
    }
  })
})
