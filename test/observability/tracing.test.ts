import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config/config.ts'
import { startTracing } from '../../src/observability/tracing.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'

/** A span as OTLP/JSON sends it (ids in hex, attributes as typed values). */
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: { key: string; value: Record<string, unknown> }[]
}

const SPAN_KIND_SERVER = 2
const SPAN_KIND_CLIENT = 3

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value
  if (value === undefined) return undefined
  const [v] = Object.values(value)
  return typeof v === 'string' && 'intValue' in value ? Number(v) : v
}

/**
 * An OpenTelemetry collector in the test: an OTLP/HTTP receiver (POST /v1/traces, the JSON
 * protocol) that keeps every span it is sent, and the raw bodies.
 */
async function startCollector(): Promise<{
  url: string
  spans: OtlpSpan[]
  bodies: string[]
  close(): Promise<void>
}> {
  const spans: OtlpSpan[] = []
  const bodies: string[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => {
      body += chunk
    })
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end()
        return
      }
      bodies.push(body)
      const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }
      for (const resource of parsed.resourceSpans)
        for (const scope of resource.scopeSpans) spans.push(...scope.spans)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describeDb('OpenTelemetry tracing', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>
  let t: TestApp
  let account: { accountId: string; apiKey: string }
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736'
  const callerSpan = '00f067aa0ba902b7'

  beforeAll(async () => {
    collector = await startCollector()
    // The SDK reads the process's environment itself, as it does in production.
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }
    for (const [name, value] of Object.entries(otel)) vi.stubEnv(name, value)
    const config = loadConfig(otel)
    expect(config.tracing.enabled).toBe(true)
    const tracing = await startTracing(config.tracing)
    t = await createTestApp({}, { tracer: tracing!.tracer })
    account = await t.newAccount()
    const as = withKey(t.app, account.apiKey)
    const created = await as({ method: 'POST', url: '/v1/pet', ...form({ name: 'Traced-Rex' }) })
    expect(created.statusCode).toBe(201)
    const { id } = created.json() as { id: number }
    const read = await as({
      method: 'GET',
      url: `/v1/pet/${id}`,
      headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
    })
    expect(read.statusCode).toBe(200)
    // Shutting down sends what the batch processor still holds.
    await tracing!.shutdown()
  })
  afterAll(async () => {
    vi.unstubAllEnvs()
    await t?.close()
    await collector?.close()
  })

  const serverSpan = (name: string) => {
    const span = collector.spans.find((s) => s.name === name && s.kind === SPAN_KIND_SERVER)
    expect(span, `a server span named ${name}`).toBeDefined()
    return span!
  }
  const ancestors = (span: OtlpSpan): OtlpSpan[] => {
    const chain: OtlpSpan[] = []
    let parentId = span.parentSpanId
    for (;;) {
      const parent = collector.spans.find((s) => s.spanId === parentId)
      if (parent === undefined) return chain
      chain.push(parent)
      parentId = parent.parentSpanId
    }
  }

  it('exports a server span per request with the route, method, status and account', () => {
    const create = serverSpan('POST /v1/pet')
    expect(attribute(create, 'http.route')).toBe('/v1/pet')
    expect(attribute(create, 'http.request.method')).toBe('POST')
    expect(attribute(create, 'http.response.status_code')).toBe(201)
    expect(attribute(create, 'account.id')).toBe(account.accountId)
  })

  it("makes the request's database work its child spans, named by operation and table", () => {
    const create = serverSpan('POST /v1/pet')
    const insert = collector.spans.find(
      (s) => s.name === 'INSERT pets' && s.traceId === create.traceId && s.kind === SPAN_KIND_CLIENT,
    )
    expect(insert, 'the INSERT of the pet, in the request’s trace').toBeDefined()
    expect(ancestors(insert!).map((s) => s.spanId)).toContain(create.spanId)
    // On PostgreSQL a create without an Idempotency-Key is one statement outside any transaction.
    expect(ancestors(insert!)[0]?.name).toBe(DIALECT === 'sqlite' ? 'transaction' : 'POST /v1/pet')
    expect(attribute(insert!, 'db.system.name')).toBe(DIALECT === 'sqlite' ? 'sqlite' : 'postgresql')
    expect(attribute(insert!, 'db.operation.name')).toBe('INSERT')
    expect(attribute(insert!, 'db.collection.name')).toBe('pets')
  })

  it('never exports the values a query was run with, nor the key', () => {
    const statements = collector.spans.map((s) => attribute(s, 'db.query.text'))
    expect(statements).toContainEqual(
      expect.stringMatching(
        DIALECT === 'sqlite'
          ? /^insert into "pets" \(.*\) values \(\?,/
          : /^with "inserted_pet" as \(insert into "pets" \(.*\) select \$1 as "id",/,
      ),
    )
    const everything = collector.bodies.join('\n')
    expect(everything).not.toContain('Traced-Rex')
    expect(everything).not.toContain(account.apiKey)
  })

  it('leaves out the database work no request started (making the account and its key, here)', () => {
    const database = collector.spans.filter((s) => s.kind === SPAN_KIND_CLIENT)
    expect(database.length).toBeGreaterThan(0)
    for (const span of database) {
      expect(
        ancestors(span).map((s) => s.kind),
        span.name,
      ).toContain(SPAN_KIND_SERVER)
    }
  })

  it("continues the caller's trace from its traceparent header", () => {
    const read = serverSpan('GET /v1/pet/:id')
    expect(read.traceId).toBe(callerTrace)
    expect(read.parentSpanId).toBe(callerSpan)
    const select = collector.spans.find((s) => s.name === 'SELECT pets' && s.traceId === callerTrace)
    expect(select).toBeDefined()
    expect(ancestors(select!).map((s) => s.spanId)).toContain(read.spanId)
  })
})
