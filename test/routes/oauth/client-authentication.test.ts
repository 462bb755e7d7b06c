import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, clientBasic, formBody, newClient, type TestClient } from '../../helpers/oauth.ts'

/**
 * Client secrets are stored as their SHA-256 (`oauth_clients.secret_hash`). The hash must never
 * work as the secret: not at the documented endpoints, not at any other spelling of their paths
 * (oidc-provider's own router ignores case and a trailing slash), and not in the provider itself.
 */
const ENDPOINTS = ['token', 'revoke', 'introspect'] as const

/** Spellings of /oauth/{endpoint} that are not the canonical one. */
function spellings(endpoint: string): string[] {
  const upper = endpoint.toUpperCase()
  const capital = endpoint[0]?.toUpperCase() + endpoint.slice(1)
  const first = endpoint.charCodeAt(0).toString(16)
  return [
    `/oauth/${upper}`,
    `/oauth/${capital}`,
    `/oauth/${endpoint}/`,
    `/oauth/${endpoint}//`,
    `/oauth/${endpoint}///`,
    `/OAUTH/${endpoint}`,
    `/Oauth/${upper}/`,
    `/oauth//${endpoint}`,
    `/oauth/./${endpoint}`,
    `/oauth/%2e/${endpoint}`,
    `/oauth/%2E/${endpoint}/`,
    `/oauth/x/../${endpoint}`,
    `/oauth/%${first}${endpoint.slice(1)}`,
    `/%6fauth/${endpoint}`,
    `/oauth/${endpoint}%2f`,
    `/oauth/${endpoint}/.`,
    `/oauth/${endpoint};x`,
  ]
}

describeDb('OAuth client authentication: the stored hash is never the secret', () => {
  let client: TestClient
  let storedHash: string
  let token: string

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    const row = await t.database.db
      .selectFrom('oauth_clients')
      .select('secret_hash')
      .where('client_id', '=', client.clientId)
      .executeTakeFirstOrThrow()
    storedHash = row.secret_hash
    token = await accessToken(t.app, client)
  })

  function fieldsFor(endpoint: (typeof ENDPOINTS)[number]): Record<string, string> {
    return endpoint === 'token' ? { grant_type: 'client_credentials' } : { token }
  }

  function post(
    url: string,
    endpoint: (typeof ENDPOINTS)[number],
    secret: string,
    via: 'basic' | 'body',
  ): Promise<LightMyRequestResponse> {
    const fields = fieldsFor(endpoint)
    if (via === 'basic') {
      const body = formBody(fields)
      return t.app.inject({
        method: 'POST',
        url,
        payload: body.payload,
        headers: { ...body.headers, authorization: clientBasic(client.clientId, secret) },
      })
    }
    return t.app.inject({
      method: 'POST',
      url,
      ...formBody({ ...fields, client_id: client.clientId, client_secret: secret }),
    })
  }

  function expectRefused(res: LightMyRequestResponse, what: string): void {
    expect(res.statusCode, `${what}: ${res.body}`).toBeGreaterThanOrEqual(400)
    expect(res.statusCode, what).toBeLessThan(500)
    expect(res.body, what).not.toContain('access_token')
    expect(res.body, what).not.toContain('"active":')
  }

  it('refuses the stored hash as the secret at every documented endpoint, in Basic and in the body', async () => {
    for (const endpoint of ENDPOINTS) {
      for (const via of ['basic', 'body'] as const) {
        const res = await post(`/oauth/${endpoint}`, endpoint, storedHash, via)
        expect(res.statusCode, `${endpoint} ${via}`).toBe(401)
        expect(res.json(), `${endpoint} ${via}`).toMatchObject({ error: 'invalid_client' })
      }
    }
  })

  it('refuses the stored hash at every other spelling of those paths (case, slashes, dot segments, encodings)', async () => {
    for (const endpoint of ENDPOINTS) {
      for (const url of spellings(endpoint)) {
        for (const via of ['basic', 'body'] as const) {
          expectRefused(await post(url, endpoint, storedHash, via), `${url} ${via}`)
        }
      }
    }
  })

  it('answers other spellings with our 404 problem, or exactly as the canonical path does', async () => {
    for (const endpoint of ENDPOINTS) {
      const canonical = await post(`/oauth/${endpoint}`, endpoint, client.clientSecret, 'basic')
      expect(canonical.statusCode, canonical.body).toBe(200)
      for (const url of spellings(endpoint)) {
        const res = await post(url, endpoint, client.clientSecret, 'basic')
        if (res.statusCode === 404) {
          expect(res.headers['content-type'], url).toContain('application/problem+json')
          expect(res.json(), url).toMatchObject({ status: 404, code: 'not_found' })
        } else {
          expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
          expect(res.headers['content-type'], url).toBe(canonical.headers['content-type'])
        }
      }
    }
  })

  it('makes the provider itself compare a hash of what was presented, whatever path reaches it', async () => {
    const stored = await t.app.oauth.provider.Client.find(client.clientId)
    expect(stored).toBeDefined()
    expect(await stored?.compareClientSecret(storedHash)).toBe(false)
    expect(await stored?.compareClientSecret(client.clientSecret)).toBe(true)
    expect(await stored?.compareClientSecret('')).toBe(false)
  })

  it('still accepts the real secret at the canonical paths, in Basic and in the body', async () => {
    for (const endpoint of ENDPOINTS) {
      for (const via of ['basic', 'body'] as const) {
        const res = await post(`/oauth/${endpoint}`, endpoint, client.clientSecret, via)
        expect(res.statusCode, `${endpoint} ${via}: ${res.body}`).toBe(200)
      }
    }
  })
})
