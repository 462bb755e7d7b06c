import { importJWK, SignJWT } from 'jose'
import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../helpers/oauth.ts'

const ISSUER = 'http://localhost:8080'
const AUDIENCE = 'http://localhost:8080/v2'

/**
 * Access tokens are RFC 9068 JWTs: `typ: at+jwt`, with `exp` and `iat` (RFC 9068 §2.2). A token
 * signed with the service's own key but missing one of them is refused, not trusted forever.
 */
describeDb('access token claims', () => {
  let client: TestClient

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
  })

  /** A token signed with the service's own signing key, shaped as `shape` says. */
  async function signed(shape: { exp?: boolean; iat?: boolean; typ?: string }): Promise<string> {
    const row = await t.database.db
      .selectFrom('oauth_keys')
      .select('value')
      .where('id', '=', 'signing')
      .executeTakeFirstOrThrow()
    const key = await importJWK(JSON.parse(row.value), 'ES256')
    const now = Math.floor(Date.now() / 1000)
    const jwt = new SignJWT({ client_id: client.clientId, account_id: client.accountId, scope: 'read:pets' })
      .setProtectedHeader({ alg: 'ES256', typ: shape.typ ?? 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(client.clientId)
      .setJti(`claims-${Math.random()}`)
    if (shape.iat !== false) jwt.setIssuedAt(now)
    if (shape.exp !== false) jwt.setExpirationTime(now + 600)
    return jwt.sign(key)
  }

  const inventory = (token: string) =>
    t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })

  it('accepts a well-formed token signed with its key (the control for the cases below)', async () => {
    expect((await inventory(await signed({}))).statusCode).toBe(200)
    expect((await inventory(await accessToken(t.app, client, 'read:pets'))).statusCode).toBe(200)
  })

  for (const [name, shape] of [
    ['without exp', { exp: false }],
    ['without iat', { iat: false }],
    ['typed JWT instead of at+jwt', { typ: 'JWT' }],
  ] as const) {
    it(`refuses a token signed with its own key ${name}: 401 error="invalid_token"`, async () => {
      const res = await inventory(await signed(shape))
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/)
      expect(res.json().code).toBe('token_invalid')
    })
  }
})
