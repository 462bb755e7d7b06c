import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic } from '../helpers/app.ts'
import { freePort, PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'
import { sampleValue, scrape } from '../observability/prometheus-text.ts'

// The pools' sizes are the operator's choice (docs/operations.md, "PostgreSQL's pool and
// durability"): the process serving on PostgreSQL opens at most DB_POOL_SIZE connections for
// requests and DB_BACKGROUND_POOL_SIZE for its background work, under load too.
describeDb(
  'DB_POOL_SIZE and DB_BACKGROUND_POOL_SIZE',
  () => {
    let database: TestDatabase
    beforeAll(async () => {
      database = await createTestDatabase({ migrate: false })
    })
    afterAll(async () => {
      await database?.destroy()
    })

    it('bounds the connections `pet-service serve` opens to PostgreSQL', async () => {
      const applicationName = `pet-pool-size-${process.pid}-${Date.now()}`
      const url = new URL(database.url)
      url.searchParams.set('application_name', applicationName)
      const metricsPort = await freePort()
      const server = await startServerProcess(PET_SERVICE_BIN, {
        DATABASE_URL: url.toString(),
        DB_POOL_SIZE: '3',
        DB_BACKGROUND_POOL_SIZE: '1',
        DB_LOCK_TIMEOUT_SECONDS: '60',
        METRICS_PORT: String(metricsPort),
      })
      const { apiKey } = await accountWithKey(database.db, { email: 'pool-size@example.com' })
      const api = `http://127.0.0.1:${server.port}`
      const connections = async () => {
        const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
        return {
          max: sampleValue(samples, 'db_client_connections_max', { pool: 'requests' }),
          idle: sampleValue(samples, 'db_client_connections', { pool: 'requests', state: 'idle' }),
          used: sampleValue(samples, 'db_client_connections', { pool: 'requests', state: 'used' }),
          backgroundMax: sampleValue(samples, 'db_client_connections_max', { pool: 'background' }),
        }
      }
      // Fast queries may be served one after another on one connection; a lock on the pets table
      // holds every list query until it is released, so forty of them really want a connection
      // at once (timing-free).
      const holder = new pg.Client({ connectionString: POSTGRES_URL })
      // Outside the holder's transaction: inside one, pg_stat_activity is read once and kept.
      const observer = new pg.Client({ connectionString: POSTGRES_URL })
      await holder.connect()
      await observer.connect()
      try {
        await holder.query('begin')
        await holder.query(`lock table ${database.schema}.pets in access exclusive mode`)
        const pending = Promise.all(
          Array.from({ length: 40 }, () =>
            fetch(`${api}/v1/pet?limit=1`, { headers: { authorization: basic(apiKey) } }),
          ),
        )
        // PostgreSQL's view: this server's sessions waiting on the lock, never more than three.
        const waiting = async () => {
          const { rows } = await observer.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
            [applicationName],
          )
          return rows[0]!.n
        }
        await waitUntil(
          'three of the server’s sessions wait for the lock',
          async () => (await waiting()) === 3,
        )
        expect(await connections()).toEqual({ max: 3, idle: 0, used: 3, backgroundMax: 1 })
        // The three requests' connections, and at most the one of the background pool (the
        // webhooks worker's, say).
        const sessions = await observer.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where application_name = $1',
          [applicationName],
        )
        expect(sessions.rows[0]!.n).toBeGreaterThanOrEqual(3)
        expect(sessions.rows[0]!.n).toBeLessThanOrEqual(4)
        await holder.query('commit')
        const answers = await pending
        expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
        const after = await connections()
        // All three opened for the forty, and no more.
        expect(after.idle + after.used).toBe(3)
      } finally {
        await holder.end()
        await observer.end()
        server.child.kill('SIGTERM')
        expect(await server.exited).toBe(0)
      }
    })
  },
  { directOnly: "it counts the service's sessions on PostgreSQL, which are the pooler's there" },
)
