import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort, PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { sampleValue, scrape } from '../observability/prometheus-text.ts'

// The pool's size is the operator's choice (README, "PostgreSQL's pool and durability"): the
// process serving on PostgreSQL opens at most DB_POOL_SIZE connections, under load too.
describeDb('DB_POOL_SIZE', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false })
  })
  afterAll(async () => {
    await database?.destroy()
  })

  it('bounds the connections `pet-service serve` opens to PostgreSQL', async () => {
    const metricsPort = await freePort()
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      DB_POOL_SIZE: '3',
      METRICS_PORT: String(metricsPort),
    })
    try {
      const api = `http://127.0.0.1:${server.port}`
      // Forty readiness checks at once, each one a query: more than three want a connection.
      const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${api}/readyz`)))
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(sampleValue(samples, 'db_client_connections_max')).toBe(3)
      const open =
        sampleValue(samples, 'db_client_connections', { state: 'idle' }) +
        sampleValue(samples, 'db_client_connections', { state: 'used' })
      // All three opened for the forty, and no more.
      expect(open).toBe(3)
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  })
})
