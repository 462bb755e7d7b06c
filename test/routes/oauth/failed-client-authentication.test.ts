import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { basic, useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, clientBasic, formBody, newClient, type TestClient } from '../../helpers/oauth.ts'

/**
 * Wrong client secrets at the token, revocation and introspection endpoints count against the
 * client's address on the limiter wrong API keys and tokens draw on (src/access/failed-attempts.ts):
 * 30 at once, then one a second.
 */
describeDb('OAuth endpoints under client-secret guessing', () => {
  let client: TestClient
  let jwt: string

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    jwt = await accessToken(t.app, client)
  })

  /** One failed client authentication of each kind: answered by the provider, or in front of it. */
  const failures: [string, (address: string) => Promise<LightMyRequestResponse>][] = [
    [
      'a wrong secret at /oauth/token',
      (address) => post(address, 'token', { grant_type: 'client_credentials' }),
    ],
    [
      'an unknown client at /oauth/token',
      (address) =>
        post(address, 'token', { grant_type: 'client_credentials' }, clientBasic('pet_ci_nobody', 'x')),
    ],
    ['a wrong secret revoking a JWT', (address) => post(address, 'revoke', { token: jwt })],
    [
      'a wrong secret introspecting an opaque token',
      (address) => post(address, 'introspect', { token: 'opaque' }),
    ],
  ]

  function post(address: string, endpoint: string, fields: Record<string, string>, authorization?: string) {
    const body = formBody(fields)
    return t.app.inject({
      method: 'POST',
      url: `/oauth/${endpoint}`,
      remoteAddress: address,
      headers: {
        ...body.headers,
        authorization: authorization ?? clientBasic(client.clientId, 'wrong-secret'),
      },
      payload: body.payload,
    })
  }

  it('answers 429 with Retry-After once an address has failed too often, and still serves the right secret', async () => {
    const address = '10.77.0.1'
    for (let i = 0; i < 30; i++) {
      const [what, send] = failures[i % failures.length]!
      const res = await send(address)
      expect(res.statusCode, `${i}: ${what}`).toBe(401)
      expect(res.json(), what).toMatchObject({ error: 'invalid_client' })
    }
    for (const [what, send] of failures) {
      let res = await send(address)
      // The allowance grows back by one a second: on a slow machine one more may be a 401.
      for (let again = 0; res.statusCode === 401 && again < 5; again++) res = await send(address)
      expect(res.statusCode, what).toBe(429)
      expect(Number(res.headers['retry-after']), what).toBeGreaterThan(0)
      expect(res.headers['www-authenticate'], what).toBeUndefined()
      expect(res.json(), what).toMatchObject({ error: 'invalid_client' })
      expect(res.json().error_description, what).toMatch(/Too many failed authentication attempts/)
    }
    // The right secret is served; another address is not held back.
    const good = await post(
      address,
      'token',
      { grant_type: 'client_credentials' },
      clientBasic(client.clientId, client.clientSecret),
    )
    expect(good.statusCode, good.body).toBe(200)
    expect((await failures[0]![1]('10.77.0.2')).statusCode).toBe(401)
    // One budget for every credential: a wrong API key from that address is past it too.
    const wrongKey = () =>
      t.app.inject({
        url: '/v1/pet',
        remoteAddress: address,
        headers: { authorization: basic('pet_sk_wrong') },
      })
    let key = await wrongKey()
    for (let again = 0; key.statusCode === 401 && again < 5; again++) key = await wrongKey()
    expect(key.statusCode).toBe(429)
  })
})
