import { Writable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, newClient } from '../helpers/oauth.ts'

describeDb('the request log line', () => {
  let t: TestApp
  const lines: Record<string, unknown>[] = []
  const raw: string[] = []

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          raw.push(line)
          lines.push(JSON.parse(line) as Record<string, unknown>)
        }
        done()
      },
    })
    t = await createTestApp({}, { logger: { level: 'info', stream } })
  })
  afterAll(() => t?.close())

  const completed = (requestId: string) => {
    const line = lines.find((l) => l.request_id === requestId && l.msg === 'request completed')
    expect(line, `the log line of ${requestId}`).toBeDefined()
    return line!
  }

  it('names the account and the API key that acted, by id, never the key', async () => {
    const { apiKey, accountId, keyId } = await t.newAccount()
    const response = await withKey(t.app, apiKey)({ method: 'GET', url: '/v1/pet' })
    expect(response.statusCode).toBe(200)
    const line = completed(String(response.headers['request-id']))
    expect(line).toMatchObject({
      method: 'GET',
      url: '/v1/pet',
      status: 200,
      account_id: accountId,
      key_id: keyId,
    })
    expect(line).not.toHaveProperty('client_id')
    expect(raw.join('\n')).not.toContain(apiKey)
  })

  it('names the OAuth client of a bearer token, never the token', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const response = await t.app.inject({
      method: 'GET',
      url: '/v2/store/inventory',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(response.statusCode).toBe(200)
    const line = completed(String(response.headers['request-id']))
    expect(line).toMatchObject({ account_id: client.accountId, client_id: client.clientId })
    expect(line).not.toHaveProperty('key_id')
    const everything = raw.join('\n')
    expect(everything).not.toContain(token)
    expect(everything).not.toContain(client.clientSecret)
  })

  it('has no account on a request that was not authenticated', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/pet' })
    expect(response.statusCode).toBe(401)
    const line = completed(String(response.headers['request-id']))
    expect(line).not.toHaveProperty('account_id')
    expect(line.status).toBe(401)
  })

  it('logs a 503 the service meant to answer (stopping) as a warning without a stack, not an error', async () => {
    t.app.deps.shutdown.started = true
    try {
      const response = await t.app.inject({ method: 'GET', url: '/readyz' })
      expect(response.statusCode).toBe(503)
      const requestId = String(response.headers['request-id'])
      const own = lines.filter((l) => l.request_id === requestId)
      expect(own.filter((l) => Number(l.level) >= 50)).toEqual([])
      expect(own.find((l) => l.level === 40)).toMatchObject({ code: 'service_unavailable' })
      expect(JSON.stringify(own)).not.toContain('"stack"')
    } finally {
      t.app.deps.shutdown.started = false
    }
  })

  it('never logs the password a v2 login sends in its query string', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const password = 'clear-text-login-secret'
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/user',
      headers: { authorization: `Bearer ${token}` },
      payload: { username: 'logged', password },
    })
    expect(created.statusCode).toBe(200)
    for (const query of [`username=logged&password=${password}`, `Password=${password}&username=logged`]) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/v2/user/login?${query}`,
        headers: { authorization: `Bearer ${token}` },
      })
      const line = completed(String(response.headers['request-id']))
      expect(String(line.url)).toContain('assword=***')
    }
    expect(raw.join('\n')).not.toContain(password)
  })
})
