import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { sampleValue, scrape } from '../observability/prometheus-text.ts'

/** The TCP ports a process listens on, from Linux's /proc (its socket inodes in LISTEN state). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]
      if (inode !== undefined) inodes.add(inode)
    } catch {
      // closed while we looked
    }
  }
  const ports: number[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      const [local, state, inode] = [fields[1], fields[3], fields[9]]
      if (state === '0A' && inode !== undefined && inodes.has(inode) && local !== undefined)
        ports.push(Number.parseInt(local.split(':')[1] ?? '', 16))
    }
  }
  return ports.sort()
}

// SQLite only: the listener, not the database, is under test. The server runs as operators run
// it, in a process of its own.
describe('the metrics listener of `pet-service serve`', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pet-service-metrics-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: `sqlite:${join(dir, 'metrics.db')}`,
    ...extra,
  })

  it('serves /metrics on METRICS_PORT, counting the requests the API port answered', async () => {
    const metricsPort = await freePort()
    const server = await startServerProcess(PET_SERVICE_BIN, env({ METRICS_PORT: String(metricsPort) }))
    try {
      const api = `http://127.0.0.1:${server.port}`
      for (let i = 0; i < 3; i++) expect((await fetch(`${api}/healthz`)).status).toBe(200)
      const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(sampleValue(samples, 'http_requests_total', { route: '/healthz', status_code: '200' })).toBe(3)
      expect(sampleValue(samples, 'http_request_duration_seconds_count', { route: '/healthz' })).toBe(3)
      // The webhooks worker's figures, with nothing to deliver (test/webhooks/delivery-metrics.test.ts).
      expect(
        samples
          .filter((s) => s.name === 'webhook_deliveries_total')
          .map((s) => s.labels.outcome)
          .sort(),
      ).toEqual(['failed', 'retrying', 'succeeded'])
      expect(samples.find((s) => s.name === 'webhook_deliveries_open')?.value).toBe(0)
      expect(listeningPorts(server.child.pid!)).toEqual([server.port, metricsPort].sort())

      const onApi = await fetch(`${api}/metrics`)
      expect(onApi.status).toBe(404)
      expect(await onApi.text()).not.toContain('http_requests_total')
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404)
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  })

  it('listens on the API port only with METRICS_PORT=0', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, env({ METRICS_PORT: '0' }))
    try {
      expect(listeningPorts(server.child.pid!)).toEqual([server.port])
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })

  it('refuses to start when the metrics port is taken, saying which setting to change', async () => {
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      // A server that starts anyway is stopped, not left running.
      const outcome = await startServerProcess(PET_SERVICE_BIN, env({ METRICS_PORT: String(port) })).then(
        (server) => {
          server.child.kill('SIGTERM')
          return 'it started'
        },
        (error: Error) => error.message,
      )
      expect(outcome).toMatch(/server exited early \(1\).*METRICS_PORT/s)
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()))
    }
  })
})
