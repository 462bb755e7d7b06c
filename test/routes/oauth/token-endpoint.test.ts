import { decodeJwt, decodeProtectedHeader } from 'jose'
import { beforeAll, expect, it } from 'vitest'
import { sha256Hex } from '../../../src/lib/hash.ts'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import {
  bearer,
  clientBasic,
  formBody,
  newClient,
  type TestClient,
  tokenRequest,
} from '../../helpers/oauth.ts'

describeDb('OAuth token endpoint: client credentials, metadata, JWKS', () => {
  let client: TestClient
  let readOnly: TestClient

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    readOnly = await newClient(t, { scopes: ['read:pets'] })
  })

  it('issues a JWT access token (RFC 9068) for client credentials sent with HTTP Basic', async () => {
    const res = await tokenRequest(t.app, client, {
      grant_type: 'client_credentials',
      scope: 'read:pets write:pets',
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toContain('no-store')
    const body = res.json()
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'read:pets write:pets', expires_in: 3600 })
    expect(body.refresh_token).toBeUndefined()
    expect(decodeProtectedHeader(body.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' })
    const claims = decodeJwt(body.access_token)
    expect(claims).toMatchObject({
      client_id: client.clientId,
      account_id: client.accountId,
      iss: 'http://localhost:8080',
      aud: 'http://localhost:8080/v2',
      scope: 'read:pets write:pets',
    })
    expect(typeof claims.jti).toBe('string')
  })

  it('grants every registered scope when none is asked for', async () => {
    const res = await tokenRequest(t.app, readOnly, { grant_type: 'client_credentials' })
    expect(res.statusCode).toBe(200)
    expect(res.json().scope).toBe('read:pets')
  })

  it('accepts the secret in the body too (client_secret_post)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      ...formBody({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: 'read:pets',
      }),
    })
    expect(res.statusCode, res.body).toBe(200)
  })

  it('answers a wrong secret with 401 invalid_client', async () => {
    const res = await tokenRequest(
      t.app,
      { clientId: client.clientId, clientSecret: `${client.clientSecret}x` },
      { grant_type: 'client_credentials' },
    )
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })

  it('answers an unknown client with 401 invalid_client', async () => {
    const res = await tokenRequest(
      t.app,
      { clientId: 'pet_ci_nobody', clientSecret: 'whatever' },
      { grant_type: 'client_credentials' },
    )
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })

  it('answers a request without any client authentication with 400 invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      ...formBody({ grant_type: 'client_credentials' }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })

  it('answers an unknown scope with 400 invalid_scope', async () => {
    const res = await tokenRequest(t.app, client, {
      grant_type: 'client_credentials',
      scope: 'read:pets admin',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_scope' })
    expect(res.json().error_description).toContain('admin')
  })

  it('answers a scope the client is not registered for with 400 invalid_scope', async () => {
    const res = await tokenRequest(t.app, readOnly, { grant_type: 'client_credentials', scope: 'write:pets' })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_scope')
  })

  it('refuses grants it does not offer: password and implicit-style requests', async () => {
    const res = await tokenRequest(t.app, client, { grant_type: 'password', username: 'a', password: 'b' })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('unsupported_grant_type')
  })

  it('takes form bodies only: JSON is invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { authorization: clientBasic(client.clientId, client.clientSecret) },
      payload: { grant_type: 'client_credentials' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })

  it('stores only the SHA-256 of a client secret', async () => {
    const row = await t.database.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('client_id', '=', client.clientId)
      .executeTakeFirstOrThrow()
    expect(row.secret_hash).toBe(sha256Hex(client.clientSecret))
    expect(JSON.stringify(row)).not.toContain(client.clientSecret)
  })

  it('publishes RFC 8414 metadata at /.well-known/oauth-authorization-server', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(res.statusCode).toBe(200)
    const metadata = res.json()
    expect(metadata).toMatchObject({
      issuer: 'http://localhost:8080',
      authorization_endpoint: 'http://localhost:8080/oauth/authorize',
      token_endpoint: 'http://localhost:8080/oauth/token',
      revocation_endpoint: 'http://localhost:8080/oauth/revoke',
      introspection_endpoint: 'http://localhost:8080/oauth/introspect',
      jwks_uri: 'http://localhost:8080/oauth/jwks',
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [
        'read:pets',
        'write:pets',
        'read:users',
        'write:users',
        'read:orders',
        'write:orders',
        'read:events',
        'read:webhooks',
        'write:webhooks',
        'read:request_logs',
      ],
    })
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'client_credentials', 'refresh_token']),
    )
    expect(metadata.grant_types_supported).not.toContain('password')
    expect(metadata.grant_types_supported).not.toContain('implicit')
    // `none`: public clients (browser apps), which prove a code exchange with PKCE instead.
    expect(metadata.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
    ])
  })

  it('publishes the public signing key, and only the public half, at /oauth/jwks', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/oauth/jwks' })
    expect(res.statusCode).toBe(200)
    const { keys } = res.json()
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
    expect(keys[0].d).toBeUndefined()
  })

  it('gives the same keys to every instance on one database', async () => {
    const { buildApp } = await import('../../../src/app.ts')
    const second = await buildApp({ config: t.config, database: t.database, logger: false })
    try {
      const token = (await tokenRequest(t.app, client, { grant_type: 'client_credentials' })).json()
        .access_token
      const res = await second.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })
      expect(res.statusCode, res.body).toBe(200)
    } finally {
      await second.close()
    }
  })
})
