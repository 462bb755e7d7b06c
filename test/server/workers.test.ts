import { request } from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey } from '../helpers/app.ts'
import {
  childPids,
  freePort,
  logLines,
  PET_SERVICE_BIN,
  readyWorkers,
  startServerProcess,
} from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { sampleValue, scrape } from '../observability/prometheus-text.ts'

/**
 * One request on a connection of its own: node:cluster hands out connections, not requests,
 * so a kept-alive connection would reach one worker only.
 */
function send(
  port: number,
  method: string,
  path: string,
  apiKey: string,
  form?: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = form === undefined ? undefined : new URLSearchParams(form).toString()
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        timeout: 30_000,
        headers: {
          authorization: `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

// The server runs as operators run it, `pet-service serve --workers 2`, in a process of its own.
describeDb('serve --workers 2', () => {
  let database: TestDatabase
  let apiKey: string
  beforeAll(async () => {
    database = await createTestDatabase()
    apiKey = (await accountWithKey(database.db, { email: 'workers@example.com' })).apiKey
  })
  afterAll(() => database.destroy())

  it('serves one port from two processes that see each other’s writes, replaces a killed worker, and drains on SIGTERM', async () => {
    const metricsPort = await freePort()
    const server = await startServerProcess(
      PET_SERVICE_BIN,
      {
        DATABASE_URL: database.url,
        RATE_LIMIT_RPS: '0',
        SHUTDOWN_DRAIN_SECONDS: '0.2',
        METRICS_PORT: String(metricsPort),
      },
      { args: ['--workers', '2'] },
    )
    try {
      await waitUntil('both workers are ready', async () => readyWorkers(server).length === 2, 120_000)
      const ready = readyWorkers(server)
      expect(ready.map((l) => l.worker).sort()).toEqual([1, 2])
      // On SQLite one process claims webhook deliveries and purges; on PostgreSQL each may.
      const background = ready.filter((l) => l.background_jobs).map((l) => l.worker)
      expect(background.sort()).toEqual(DIALECT === 'sqlite' ? [1] : [1, 2])
      const workerPids = new Set(ready.map((l) => l.pid))
      expect(workerPids.size).toBe(2)
      expect(workerPids.has(server.child.pid!)).toBe(false)

      // Each pet created on one connection, read back on another: whichever worker answers.
      const ids: number[] = []
      for (let i = 0; i < 10; i++) {
        const created = await send(server.port, 'POST', '/v1/pet', apiKey, { name: `W${i}`, species: 'dog' })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        ids.push(created.body.id as number)
        const read = await send(server.port, 'GET', `/v1/pet/${created.body.id}`, apiKey)
        expect(read.status).toBe(200)
        expect(read.body.name).toBe(`W${i}`)
      }
      const answeredBy = new Set(
        logLines(server)
          .filter((l) => l.msg === 'request completed')
          .map((l) => l.pid),
      )
      expect(answeredBy).toEqual(workerPids)
      const list = await send(server.port, 'GET', '/v1/pet?limit=100', apiKey)
      expect((list.body.data as { id: number }[]).map((p) => p.id).sort()).toEqual([...ids].sort())

      // One /metrics for the whole cluster: both workers' requests, added up.
      const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(sampleValue(samples, 'http_requests_total', { route: '/v1/pet', method: 'POST' })).toBe(10)
      expect(sampleValue(samples, 'http_requests_total', { route: '/v1/pet/:id', method: 'GET' })).toBe(10)

      // A worker that answered some of the creates: the cluster's count loses them with it.
      const victim = logLines(server).find(
        (l) => l.msg === 'request completed' && l.method === 'POST' && l.url === '/v1/pet',
      )?.pid
      expect(workerPids.has(victim!)).toBe(true)
      process.kill(victim!, 'SIGKILL')
      // While the replacement starts, /metrics answers at once with the worker that serves.
      await waitUntil('the replacement is forked', async () =>
        childPids(server.child.pid!).some((pid) => !workerPids.has(pid)),
      )
      const started = Date.now()
      const meanwhile = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(Date.now() - started).toBeLessThan(4000)
      expect(
        sampleValue(meanwhile, 'http_requests_total', { route: '/v1/pet', method: 'POST' }),
      ).toBeLessThan(10)
      await waitUntil(
        'a new worker replaces the killed one',
        async () => readyWorkers(server).length === 3,
        120_000,
      )
      const replacement = readyWorkers(server)[2]!
      expect(workerPids.has(replacement.pid)).toBe(false)
      expect(replacement.worker).toBe(ready.find((l) => l.pid === victim)?.worker)
      for (let i = 0; i < 4; i++) {
        expect((await send(server.port, 'GET', '/v1/pet?limit=1', apiKey)).status).toBe(200)
      }
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    const lines = logLines(server)
    expect(lines.filter((l) => l.msg === 'shutting down: not ready, draining')).toHaveLength(2)
    expect(lines.at(-1)?.msg).toBe('all workers have exited')
  }, 300_000)
})
