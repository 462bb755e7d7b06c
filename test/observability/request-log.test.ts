import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { SECRET_QUERY_PARAMETERS } from '../../src/errors/redact.ts'
import { createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, newClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

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

  /** Every way a client may spell a parameter name that the query parser reads as that name. */
  function encodings(name: string): string[] {
    const hex = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`
    const chars = [...name]
    return [
      name,
      name.toUpperCase(),
      `${name}+`,
      `+${name}`,
      chars.map(hex).join(''),
      chars.map((c) => hex(c).toUpperCase()).join(''),
      encodeURIComponent(chars.map(hex).join('')),
      ...chars.map((_, i) => chars.map((c, j) => (j === i ? hex(c) : c)).join('')),
      ...chars.map((_, i) => chars.map((c, j) => (j === i ? hex(c).toUpperCase() : c)).join('')),
    ]
  }

  /** A GET as the client spells its target: over a socket, since app.inject drops what follows a `#`. */
  function rawGet(port: number, target: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.end(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`),
      )
      let answer = ''
      socket.on('data', (chunk) => {
        answer += chunk.toString()
      })
      socket.on('end', () => resolve(answer))
      socket.on('error', reject)
    })
  }

  it('never logs a secret query parameter, whichever way its name is encoded and its query begins', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as { port: number }
    const sent: string[] = []
    for (const name of SECRET_QUERY_PARAMETERS) {
      for (const [i, spelled] of encodings(name).entries()) {
        for (const begins of ['?', '#']) {
          const secret = `sEcReT${sent.length}x${i}`
          sent.push(secret)
          const answer = await rawGet(port, `/healthz${begins}a=1&${spelled}=${secret}&b=2`)
          expect(answer).toMatch(/^HTTP\/1\.1 200/)
        }
      }
    }
    const logged = () =>
      lines.filter((l) => l.msg === 'request completed' && String(l.url).startsWith('/healthz')).length
    await waitUntil('every request is logged', async () => logged() >= sent.length)
    const everything = raw.join('\n')
    for (const secret of sent) expect(everything).not.toContain(secret)
  })

  it('never logs a v2 login password sent under an encoded name, which the login reads as the password', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const password = 'encoded-name-login-secret'
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/user',
      headers: { authorization: `Bearer ${token}` },
      payload: { username: 'encoded', password },
    })
    expect(created.statusCode).toBe(200)
    for (const name of ['%70assword', 'pass%77ord', 'p%61ssword', '%70%61%73%73%77%6F%72%64']) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/v2/user/login?username=encoded&${name}=${password}`,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(response.statusCode, name).toBe(200)
      expect(String(completed(String(response.headers['request-id'])).url)).toContain(`${name}=***`)
    }
    expect(raw.join('\n')).not.toContain(password)
  })
})
