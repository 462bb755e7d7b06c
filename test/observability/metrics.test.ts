import { connect } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenForMetrics, type MetricsServer } from '../../src/observability/metrics-server.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { pollUntil } from '../helpers/poll.ts'
import { sampleValue, scrape } from './prometheus-text.ts'

describeDb('Prometheus metrics', () => {
  let t: TestApp
  let metrics: MetricsServer
  let apiKey: string
  let petId: number

  beforeAll(async () => {
    t = await createTestApp()
    metrics = await listenForMetrics(t.app.metrics!, { host: '127.0.0.1', port: 0 })
    apiKey = (await t.newAccount()).apiKey
    const created = await withKey(
      t.app,
      apiKey,
    )({ method: 'POST', url: '/v1/pet', ...form({ name: 'Counted' }) })
    petId = (created.json() as { id: number }).id
  })
  afterAll(async () => {
    await metrics?.close()
    await t?.close()
  })

  it('counts requests by method, route pattern and status, exactly as many as were sent, with their latency', async () => {
    const read = { method: 'GET', route: '/v1/pet/:id', status_code: '200' }
    const missing = { method: 'GET', route: '/v1/pet/:id', status_code: '404' }
    const created = { method: 'POST', route: '/v1/pet', status_code: '201' }
    const before = await scrape(metrics.url)

    const as = withKey(t.app, apiKey)
    for (let i = 0; i < 7; i++)
      expect((await as({ method: 'GET', url: `/v1/pet/${petId}` })).statusCode).toBe(200)
    for (let i = 0; i < 2; i++)
      expect((await as({ method: 'GET', url: '/v1/pet/999999' })).statusCode).toBe(404)
    for (let i = 0; i < 3; i++) {
      expect((await as({ method: 'POST', url: '/v1/pet', ...form({ name: `N${i}` }) })).statusCode).toBe(201)
    }
    const after = await scrape(metrics.url)

    const moved = (name: string, labels: Record<string, string>) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels)
    expect(moved('http_requests_total', read)).toBe(7)
    expect(moved('http_requests_total', missing)).toBe(2)
    expect(moved('http_requests_total', created)).toBe(3)
    expect(moved('http_request_duration_seconds_count', read)).toBe(7)
    expect(moved('http_request_duration_seconds_count', created)).toBe(3)
    expect(moved('http_request_duration_seconds_bucket', { ...read, le: '+Inf' })).toBe(7)
    expect(moved('http_request_duration_seconds_sum', read)).toBeGreaterThan(0)
  })

  it('labels routes by their pattern, never the raw URL, and unmatched paths under one label', async () => {
    for (const url of ['/no/such/page', '/another/missing?x=1', `/v1/pet/${petId}?expand=x`])
      await t.app.inject({ url })
    const samples = await scrape(metrics.url)
    const routes = new Set(samples.filter((s) => s.name === 'http_requests_total').map((s) => s.labels.route))
    expect(routes).toContain('unmatched')
    for (const route of routes) expect(route).not.toMatch(/\?|\d{2,}|no\/such/)
    expect(sampleValue(samples, 'http_requests_total', { route: 'unmatched', status_code: '404' })).toBe(2)
  })

  it('is not served on the API port', async () => {
    const response = await t.app.inject({ url: '/metrics' })
    expect(response.statusCode).toBe(404)
    expect(response.body).not.toContain('http_requests_total')
  })

  /** http_requests_in_flight once a request is counted in (still 0 after 5 s if it never is). */
  async function inFlightOnceCounted(): Promise<number> {
    let inFlight = 0
    await pollUntil(
      async () => {
        inFlight = sampleValue(await scrape(metrics.url), 'http_requests_in_flight')
        return inFlight !== 0
      },
      5_000,
      20,
    )
    return inFlight
  }

  it('counts a request in flight until its response is sent', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as { port: number }
    const body = 'name=Slow'
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    const answered = new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString()
        if (text.includes('\r\n\r\n')) resolve(text)
      })
    })
    const auth = Buffer.from(`${apiKey}:`).toString('base64')
    // Headers and half the body: the request is received, not answered.
    socket.write(
      `POST /v1/pet HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\nname=`,
    )
    expect(await inFlightOnceCounted()).toBe(1)
    socket.write('Slow')
    expect(await answered).toMatch(/^HTTP\/1\.1 201/)
    socket.destroy()
    expect(sampleValue(await scrape(metrics.url), 'http_requests_in_flight')).toBe(0)
  })

  it('counts a request out when its client goes away before the answer', async () => {
    const { port } = t.app.server.address() as { port: number }
    const before = await scrape(metrics.url)
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    const auth = Buffer.from(`${apiKey}:`).toString('base64')
    socket.write(
      `POST /v1/pet HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nname=`,
    )
    expect(await inFlightOnceCounted()).toBe(1)
    socket.destroy()
    let after = await scrape(metrics.url)
    await pollUntil(
      async () => {
        after = await scrape(metrics.url)
        return sampleValue(after, 'http_requests_in_flight') === 0
      },
      5_000,
      20,
    )
    expect(sampleValue(after, 'http_requests_in_flight')).toBe(0)
    const labels = { method: 'POST', route: '/v1/pet' }
    expect(
      sampleValue(after, 'http_requests_aborted_total', labels) -
        sampleValue(before, 'http_requests_aborted_total', labels),
    ).toBe(1)
  })

  it("reports the process's heap and event-loop lag", async () => {
    const samples = await scrape(metrics.url)
    expect(sampleValue(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(1_000_000)
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true)
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds')).toBe(true)
  })

  it(
    DIALECT === 'sqlite' ? 'reports the size and time of each group commit' : 'reports the pool',
    async () => {
      const before = await scrape(metrics.url)
      const as = withKey(t.app, apiKey)
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          as({ method: 'POST', url: '/v1/pet', ...form({ name: `B${i}` }) }),
        ),
      )
      const after = await scrape(metrics.url)
      expect(sampleValue(after, 'db_client_connection_pending_requests')).toBe(0)
      if (DIALECT === 'sqlite') {
        const commits =
          sampleValue(after, 'sqlite_group_commit_transactions_count') -
          sampleValue(before, 'sqlite_group_commit_transactions_count')
        const carried =
          sampleValue(after, 'sqlite_group_commit_transactions_sum') -
          sampleValue(before, 'sqlite_group_commit_transactions_sum')
        expect(commits).toBeGreaterThanOrEqual(1)
        // Each create writes in one transaction (plus the key's last-used time, now and then).
        expect(carried).toBeGreaterThanOrEqual(5)
        expect(sampleValue(after, 'sqlite_group_commit_duration_seconds_count')).toBeGreaterThanOrEqual(
          commits,
        )
        expect(sampleValue(after, 'sqlite_group_commit_failures_total')).toBe(0)
      } else {
        expect(sampleValue(after, 'db_client_connections_max')).toBe(5)
        const idle = sampleValue(after, 'db_client_connections', { state: 'idle' })
        const used = sampleValue(after, 'db_client_connections', { state: 'used' })
        expect(idle).toBeGreaterThanOrEqual(1)
        expect(idle + used).toBeLessThanOrEqual(5)
      }
    },
  )

  it('keeps each app to its own figures, and METRICS_PORT=0 turns them off', async () => {
    const other = await createTestApp()
    const off = await createTestApp({ METRICS_PORT: '0' })
    try {
      const otherMetrics = await listenForMetrics(other.app.metrics!, { host: '127.0.0.1', port: 0 })
      await other.app.inject({ url: '/healthz' })
      const samples = await scrape(otherMetrics.url)
      await otherMetrics.close()
      expect(sampleValue(samples, 'http_requests_total', { route: '/healthz' })).toBe(1)
      expect(sampleValue(samples, 'http_requests_total', { route: '/v1/pet/:id' })).toBe(0)
      expect(off.app.metrics).toBeUndefined()
    } finally {
      await other.close()
      await off.close()
    }
  })
})
