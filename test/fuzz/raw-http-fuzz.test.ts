import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, newClient } from '../helpers/oauth.ts'
import { announce, FUZZ_SEED, fuzzTimeoutMs, requestsFor } from './fuzz-config.ts'
import { reportFailure } from './invariants.ts'

const TOTAL = requestsFor('rawHttp')
const BATCH = 25
/** A connection that neither answers nor closes within this long is a hang. */
const ANSWER_WITHIN_MS = 5_000

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** Writes the bytes, half-closes, and reads everything until the server closes. */
function exchangeRaw(port: number, bytes: Buffer): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ data: Buffer.concat(chunks), closed })
    }
    const timer = setTimeout(() => done(false), ANSWER_WITHIN_MS)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    // A reset once the server has answered (it closes a connection it cannot parse) is a close.
    socket.on('error', () => done(true))
    socket.on('close', () => done(true))
    socket.end(bytes)
  })
}

/**
 * The responses in a byte stream (1xx interim responses skipped). `methods` are those of the
 * requests in order: an answer to HEAD has no body whatever its Content-Length says.
 */
function parseResponses(data: Buffer, methods: string[]): RawAnswer[] {
  const out: RawAnswer[] = []
  let at = 0
  while (at < data.length) {
    const headEnd = data.indexOf('\r\n\r\n', at)
    if (headEnd === -1)
      throw new Error(
        `a truncated response head: ${JSON.stringify(data.subarray(at).toString('latin1').slice(0, 300))}`,
      )
    const [statusLine = '', ...lines] = data.subarray(at, headEnd).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
    if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    let bodyStart = headEnd + 4
    let body: Buffer = Buffer.alloc(0)
    // An answer to HEAD has no body, unless the server could not parse the request (a malformed
    // request line or header): then it answers an unknown method, with a body, and closes.
    const unparsed = data.subarray(bodyStart, bodyStart + 5).toString('latin1') !== 'HTTP/'
    const answersHead = methods[out.length] === 'HEAD' && !(unparsed && headers.connection === 'close')
    if (answersHead || status < 200) {
      // No body.
    } else if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = []
      for (;;) {
        const lineEnd = data.indexOf('\r\n', bodyStart)
        const size = Number.parseInt(data.subarray(bodyStart, lineEnd).toString('latin1'), 16)
        bodyStart = lineEnd + 2
        if (!(size > 0)) {
          bodyStart += 2
          break
        }
        parts.push(data.subarray(bodyStart, bodyStart + size))
        bodyStart += size + 2
      }
      body = Buffer.concat(parts)
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length'])
      body = data.subarray(bodyStart, bodyStart + length)
      bodyStart += length
    } else if (status >= 200 && status !== 204 && status !== 304) {
      body = data.subarray(bodyStart)
      bodyStart = data.length
    }
    if (status >= 200) out.push({ status, headers, body })
    at = bodyStart
  }
  return out
}

const LINE_ENDINGS = ['\r\n', '\r\n', '\r\n', '\n'] as const

const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'), weight: 8 },
  {
    arbitrary: fc.constantFrom('get', 'G ET', '', 'CONNECT', 'TRACE', 'PRI', 'FOO', 'GET\u0000', 'PROPFIND'),
    weight: 2,
  },
)

const target = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '/healthz',
      '/readyz',
      '/v1/pet',
      '/v1/pet/1',
      '/v1/user',
      '/v2/pet',
      '/v2/pet/1',
      '/v2/pet/findByStatus?status=available',
      '/v2/user/1',
      '/v2/user/login?username=a&password=b',
      '/v2/store/inventory',
      '/problems/not_found',
      '/openapi.json',
    ),
    weight: 6,
  },
  {
    arbitrary: fc.constantFrom(
      '*',
      'http://127.0.0.1/v1/pet',
      'https://evil.example/v1/pet',
      '127.0.0.1:80',
      '/v1/pet?%',
      '/v1/pet#frag',
      '/v1/%00',
      '/v1/pet/%2e%2e/%2e%2e/healthz',
      '//v1/pet',
      '/\u00e9',
      '/v1/pet/\u20ac',
      '/v1/pet?a=\u0001',
      '',
      ' /v1/pet',
      `/v1/pet?${'q'.repeat(20_000)}`,
    ),
    weight: 2,
  },
)

const version = fc.oneof(
  { arbitrary: fc.constant('HTTP/1.1'), weight: 8 },
  {
    arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'http/1.1', 'HTTP/9.9', '', 'HTTP/1.1x'),
    weight: 2,
  },
)

const headerValue = fc.oneof(
  { arbitrary: fc.string({ maxLength: 30 }), weight: 6 },
  {
    arbitrary: fc.constantFrom('\u0001', 'a\u007fb', 'a\u0000b', 'é', '\u00ff', ' leading', 'trailing ', ''),
    weight: 2,
  },
  { arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => 'v'.repeat(n)), weight: 1 },
)

const extraHeader = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'X-Fuzz',
          'Content-Type',
          'Accept',
          'Idempotency-Key',
          'If-Match',
          'Request-Id',
          'Expect',
          'Connection',
          'Upgrade',
          'Api_key',
          'Authorization',
        ),
        headerValue,
      )
      .map(([name, value]) => `${name}: ${value}`),
    weight: 6,
  },
  {
    arbitrary: fc.constantFrom(
      'Bad Name: x',
      'X:Y: z',
      ': empty-name',
      'No-Colon',
      'X-Fold: a\r\n  folded',
      'Content-Type: application/json\r\nContent-Type: text/plain',
      'Host: second.example',
      'Expect: 100-continue',
      'Transfer-Encoding: gzip',
      'Transfer-Encoding: chunked, chunked',
      'Connection: upgrade\r\nUpgrade: websocket',
      'é: x',
    ),
    weight: 2,
  },
)

type Framing =
  | 'exact'
  | 'none'
  | 'short'
  | 'long'
  | 'negative'
  | 'nan'
  | 'double'
  | 'chunked'
  | 'bad-chunk'
  | 'both'

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { arbitrary: fc.constant<Framing>('exact'), weight: 6 },
  {
    arbitrary: fc.constantFrom<Framing>(
      'none',
      'short',
      'long',
      'negative',
      'nan',
      'double',
      'chunked',
      'bad-chunk',
      'both',
    ),
    weight: 4,
  },
)

const body = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '{"name":"Rex"}',
    'name=Rex',
    '{"name":"x","photoUrls":[]}',
    '{',
    '\u0000',
    '[[[[[[[[]]]]]]]]',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
)

function frame(bodyText: string, how: Framing, eol: string): { headers: string[]; payload: Buffer } {
  const bytes = Buffer.from(bodyText)
  const chunked = Buffer.from(`${bytes.length.toString(16)}${eol}${bodyText}${eol}0${eol}${eol}`)
  switch (how) {
    case 'exact':
      return { headers: [`Content-Length: ${bytes.length}`], payload: bytes }
    case 'none':
      return { headers: [], payload: bytes }
    case 'short':
      return { headers: [`Content-Length: ${Math.max(0, bytes.length - 3)}`], payload: bytes }
    case 'long':
      return { headers: [`Content-Length: ${bytes.length + 10}`], payload: bytes }
    case 'negative':
      return { headers: ['Content-Length: -1'], payload: bytes }
    case 'nan':
      return { headers: ['Content-Length: 1e3'], payload: bytes }
    case 'double':
      return {
        headers: [`Content-Length: ${bytes.length}`, `Content-Length: ${bytes.length + 1}`],
        payload: bytes,
      }
    case 'chunked':
      return { headers: ['Transfer-Encoding: chunked'], payload: chunked }
    case 'bad-chunk':
      return {
        headers: ['Transfer-Encoding: chunked'],
        payload: Buffer.from(`zz${eol}${bodyText}${eol}0${eol}${eol}`),
      }
    case 'both':
      return { headers: [`Content-Length: ${bytes.length}`, 'Transfer-Encoding: chunked'], payload: chunked }
  }
}

describeDb('fuzzing the HTTP layer over real sockets', () => {
  let t: TestApp
  let port: number
  let auth: string[]

  beforeAll(async () => {
    announce('raw-http-fuzz', TOTAL)
    t = await createTestApp()
    const client = await newClient(t)
    auth = [
      `Authorization: ${basic(client.apiKey)}`,
      `Authorization: Bearer ${await accessToken(t.app, client)}`,
    ]
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as AddressInfo).port
  })
  afterAll(() => t.close())

  function rawRequest(): fc.Arbitrary<{ bytes: Buffer; target: string; methods: string[] }> {
    return fc
      .record({
        method,
        target,
        version,
        eol: fc.constantFrom(...LINE_ENDINGS),
        host: fc.oneof(
          { arbitrary: fc.constant('Host: 127.0.0.1'), weight: 8 },
          { arbitrary: fc.constantFrom('', 'Host:', 'Host: a\r\nHost: b', 'Host: é'), weight: 1 },
        ),
        auth: fc.option(fc.constantFrom(...auth), { nil: undefined, freq: 4 }),
        headers: fc.array(extraHeader, { maxLength: 6 }),
        body,
        framing,
        pipelined: fc.boolean(),
      })
      .map((r) => {
        const framed = frame(r.body, r.framing, r.eol)
        const head = [
          `${r.method} ${r.target} ${r.version}`.trimEnd(),
          ...(r.host === '' ? [] : [r.host]),
          ...(r.auth === undefined ? [] : [r.auth]),
          ...r.headers,
          ...framed.headers,
        ].join(r.eol)
        const one = Buffer.concat([Buffer.from(`${head}${r.eol}${r.eol}`, 'utf8'), framed.payload])
        const second = Buffer.from(`GET /healthz HTTP/1.1${r.eol}Host: 127.0.0.1${r.eol}${r.eol}`)
        return {
          bytes: r.pipelined ? Buffer.concat([one, second]) : one,
          target: r.target,
          methods: r.pipelined ? [r.method, 'GET'] : [r.method],
        }
      })
  }

  it(
    'answers whatever arrives on a socket without a 5xx, with a problem for each 4xx of the API, and stays up',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(rawRequest(), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
          for (const { bytes, target: path, methods } of batch) {
            const { data, closed } = await exchangeRaw(port, bytes)
            const shown = JSON.stringify(bytes.toString('latin1').slice(0, 400))
            if (!closed) throw new Error(`no answer and no close within ${ANSWER_WITHIN_MS} ms\n  ${shown}`)
            let answers: RawAnswer[]
            try {
              answers = parseResponses(data, methods)
            } catch (error) {
              throw new Error(`${(error as Error).message}\n  ${shown}`)
            }
            for (const answer of answers) {
              const context = `${answer.status} ${answer.body.toString('utf8').slice(0, 300)}\n  ${shown}`
              if (answer.status >= 500) throw new Error(`answered ${context}`)
              const api = !path.includes('/dashboard') && !path.includes('/oauth')
              if (answer.status >= 400 && api && answer.body.length > 0) {
                if (
                  answer.headers['content-type'] !== 'application/problem+json' &&
                  !answer.headers['content-type']?.startsWith('application/problem+json')
                )
                  throw new Error(`a ${answer.status} that is not a problem document: ${context}`)
                const problem = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>
                if (
                  typeof problem.code !== 'string' ||
                  problem.status !== answer.status ||
                  typeof problem.request_id !== 'string'
                )
                  throw new Error(`an incomplete problem document: ${context}`)
              }
            }
          }
          expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 'the server stays alive').toBe(200)
        }),
        {
          seed: FUZZ_SEED + 30,
          numRuns: Math.ceil(TOTAL / BATCH),
          endOnFailure: true,
          asyncReporter: reportFailure,
        },
      )
    },
    fuzzTimeoutMs(TOTAL * 20),
  )
})
