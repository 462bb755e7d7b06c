import { afterEach, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { newClient, pkcePair } from '../helpers/oauth.ts'

// Which address and protocol a request comes from does not depend on the database: SQLite only.
describeDb('client addresses and protocol behind a reverse proxy', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  /** A request with a wrong API key, as a proxy at `peer` forwards it with `forwardedFor`. */
  const failAuth = (app: TestApp['app'], forwardedFor: string, peer = '127.0.0.1') =>
    app.inject({
      method: 'GET',
      url: '/v1/pet',
      remoteAddress: peer,
      headers: { authorization: 'Bearer pet_sk_wrong', 'x-forwarded-for': forwardedFor },
    })

  it('with TRUST_PROXY=1, a client cannot escape the failed-authentication limit by rotating X-Forwarded-For', async () => {
    t = await createTestApp({ TRUST_PROXY: '1' })
    const statuses: number[] = []
    for (let i = 0; i < 35; i++) {
      // The client invents the first address; the proxy appends the one it saw.
      statuses.push((await failAuth(t.app, `10.0.${i}.1, 203.0.113.7`)).statusCode)
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30)).toEqual([429, 429, 429, 429, 429])
    // Another client behind the same proxy has a budget of its own.
    expect((await failAuth(t.app, '203.0.113.8')).statusCode).toBe(401)
  })

  it('with TRUST_PROXY naming the proxy, ignores X-Forwarded-For sent by anyone else', async () => {
    t = await createTestApp({ TRUST_PROXY: '10.0.0.0/8' })
    const statuses: number[] = []
    for (let i = 0; i < 31; i++)
      statuses.push((await failAuth(t.app, `192.0.2.${i}`, '198.51.100.9')).statusCode)
    expect(statuses.at(-1)).toBe(429)
    // Through the trusted proxy, the address it reports counts.
    expect((await failAuth(t.app, '192.0.2.200', '10.1.2.3')).statusCode).toBe(401)
  })

  it('marks the dashboard and OAuth cookies Secure only when a trusted proxy says the client used https', async () => {
    t = await createTestApp({ TRUST_PROXY: '10.0.0.0/8' })
    const client = await newClient(t, {
      redirectUris: ['http://localhost:5555/callback'],
      scopes: ['read:pets'],
    })
    const authorize = `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: 'http://localhost:5555/callback',
      scope: 'read:pets',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })}`
    const cookiesOf = async (url: string, peer: string) => {
      const res = await t!.app.inject({
        method: 'GET',
        url,
        remoteAddress: peer,
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'pets.example.com' },
      })
      const cookies = res.headers['set-cookie']
      expect(cookies, `${url}: ${res.statusCode}`).toBeDefined()
      return ([] as string[]).concat(cookies ?? [])
    }
    for (const url of ['/dashboard/sign-in', authorize]) {
      for (const cookie of await cookiesOf(url, '10.0.0.2')) expect(cookie, url).toMatch(/;\s*secure/i)
      for (const cookie of await cookiesOf(url, '198.51.100.9'))
        expect(cookie, url).not.toMatch(/;\s*secure/i)
    }
  })
})
