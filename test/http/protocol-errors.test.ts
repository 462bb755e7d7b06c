import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { beforeAll, expect, it } from 'vitest'
import { generateApiKey } from '../../src/keys/api-key-format.ts'
import { basic, form, useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

/** Sends raw bytes and reads until the server closes the connection. */
function rawExchange(port: number, request: string | Buffer): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false })
    }, 5_000)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', (error) => {
      // A reset after the answer was read still counts as closed.
      if (chunks.length === 0) reject(error)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true })
    })
    socket.write(request)
  })
}

function parseResponse(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: Buffer.from(body, 'latin1').toString('utf8'),
  }
}

describeDb(
  'protocol errors: credentials never echoed, 405 with Allow, malformed HTTP answered as a problem',
  () => {
    let port: number
    let apiKey: string
    let token: string

    const t = useTestApp()
    beforeAll(async () => {
      const client = await newClient(t)
      apiKey = client.apiKey
      token = await accessToken(t.app, client)
      await t.app.listen({ port: 0, host: '127.0.0.1' })
      port = (t.app.server.address() as AddressInfo).port
    })

    /** The body and headers never carry more of `secret` than its `pet_sk_` prefix and last four. */
    function expectNotEchoed(res: { body: string; headers: Record<string, unknown> }, secret: string) {
      const everything = `${res.body}\n${JSON.stringify(res.headers)}`
      const prefix = secret.startsWith('pet_sk_') ? 'pet_sk_' : ''
      const hidden = secret.slice(prefix.length, -4)
      expect(everything).not.toContain(secret.slice(0, prefix.length + 4))
      for (let i = 0; i + 5 <= hidden.length; i++) {
        expect(everything, `echoes ${hidden.slice(i, i + 5)}`).not.toContain(hidden.slice(i, i + 5))
      }
    }

    it('never echoes an API key sent without a scheme (v1 and v2)', async () => {
      for (const authorization of [apiKey, `${apiKey} trailing`, `${apiKey}x`, `Token ${apiKey}`]) {
        const v1 = await t.app.inject({ method: 'GET', url: '/v1/pet', headers: { authorization } })
        expect(v1.statusCode).toBe(401)
        expect(v1.headers['content-type']).toContain('application/problem+json')
        expectNotEchoed(v1, apiKey)
        const v2 = await t.app.inject({ method: 'GET', url: '/v2/pet/1', headers: { authorization } })
        expect(v2.statusCode).toBe(401)
        expectNotEchoed(v2, apiKey)
      }
      const hint = await t.app.inject({ method: 'GET', url: '/v1/pet', headers: { authorization: apiKey } })
      expect(hint.json().detail).toMatch(/Bearer/)
      expect(hint.json().detail).toContain(`…${apiKey.slice(-4)}`)
    })

    it('shows at most the prefix and last four of a wrong key, token or api_key header', async () => {
      // A key of the right shape and checksum that no account holds: the lookup answers.
      const revokedLike = generateApiKey()
      for (const res of [
        await t.app.inject({ method: 'GET', url: '/v1/pet', headers: { authorization: basic(revokedLike) } }),
        await t.app.inject({
          method: 'GET',
          url: '/v1/pet',
          headers: { authorization: `Bearer ${revokedLike}` },
        }),
        await t.app.inject({ method: 'GET', url: '/v2/pet/1', headers: { api_key: revokedLike } }),
      ]) {
        expect(res.statusCode).toBe(401)
        expectNotEchoed(res, revokedLike)
      }
      const badToken = `${token.slice(0, -8)}AAAAAAAA`
      const v2 = await t.app.inject({ method: 'GET', url: '/v2/pet/1', headers: bearer(badToken) })
      expect(v2.statusCode).toBe(401)
      expectNotEchoed(v2, badToken)
    })

    it('never echoes an Idempotency-Key in full', async () => {
      const key = `idem-${'s3cr3t'.repeat(8)}-tail`
      const call = (name: string) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/pet',
          ...form({ name }),
          headers: { ...form({}).headers, authorization: basic(apiKey), 'idempotency-key': key },
        })
      expect((await call('first')).statusCode).toBe(201)
      const reused = await call('second')
      expect(reused.statusCode).toBe(422)
      expect(reused.body).not.toContain('s3cr3t')
    })

    it('answers an unsupported method with 405, an Allow header and a problem, on every API path', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<string, Record<string, unknown>>
      }
      // A URL may match several templates (`/v2/pet/findByStatus` is also `/v2/pet/{petId}`).
      const templates = Object.entries(doc.paths).map(([path, operations]) => ({
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        methods: Object.keys(operations).map((m) => m.toUpperCase()),
      }))
      templates.push(
        ...['/healthz', '/readyz', '/problems/{code}', '/openapi.json', '/docs'].map((path) => ({
          pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
          methods: ['GET'],
        })),
      )
      const urls = [
        ...Object.keys(doc.paths).map((path) => path.replace(/\{[^}]+\}/g, '1')),
        '/healthz',
        '/readyz',
        '/problems/not_found',
        '/openapi.json',
        '/docs',
      ]
      expect(urls.length).toBeGreaterThan(15)
      for (const url of urls) {
        const expected = new Set(templates.filter((t) => t.pattern.test(url)).flatMap((t) => t.methods))
        if (expected.has('GET')) expected.add('HEAD')
        const unsupported = ['DELETE', 'PATCH', 'PUT', 'POST'].find((m) => !expected.has(m))!
        const res = await t.app.inject({
          method: unsupported as 'DELETE',
          url,
          headers: { authorization: basic(apiKey) },
        })
        expect(res.statusCode, `${unsupported} ${url}: ${res.body}`).toBe(405)
        expect(res.headers['content-type']).toContain('application/problem+json')
        const allow = String(res.headers.allow)
          .split(',')
          .map((m) => m.trim())
        expect(new Set(allow), url).toEqual(expected)
        expect(res.json()).toMatchObject({ code: 'method_not_allowed', status: 405 })
        expect(res.json().detail).toContain(unsupported)
      }
      // An unknown path is still 404.
      expect((await t.app.inject({ method: 'DELETE', url: '/v1/nothing-here' })).statusCode).toBe(404)
    })

    it('answers malformed HTTP with a problem document and closes the connection', async () => {
      const cases: { request: string; status: number }[] = [
        { request: 'BROKEN LINE\r\n\r\n', status: 400 },
        { request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', status: 400 },
        {
          request:
            'POST /v1/pet HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
          status: 400,
        },
        { request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', status: 400 },
        { request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431 },
      ]
      for (const c of cases) {
        const { text, closed } = await rawExchange(port, c.request)
        const res = parseResponse(text)
        expect(res.status, text.slice(0, 200)).toBe(c.status)
        expect(res.headers['content-type']).toBe('application/problem+json')
        expect(res.headers['request-id']).toMatch(/^req_/)
        expect(res.headers.connection).toBe('close')
        const problem = JSON.parse(res.body)
        expect(problem).toMatchObject({ status: c.status, request_id: res.headers['request-id'] })
        expect(typeof problem.type).toBe('string')
        expect(typeof problem.title).toBe('string')
        expect(typeof problem.detail).toBe('string')
        expect(typeof problem.code).toBe('string')
        expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body))
        expect(closed).toBe(true)
      }
      // The answer to a malformed HEAD has the headers only (RFC 9110 §9.3.2).
      const head = await rawExchange(port, 'HEAD /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')
      const headAnswer = parseResponse(head.text)
      expect(headAnswer.status).toBe(400)
      expect(Number(headAnswer.headers['content-length'])).toBeGreaterThan(0)
      expect(headAnswer.body).toBe('')
      // The server still answers.
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    })
  },
)
