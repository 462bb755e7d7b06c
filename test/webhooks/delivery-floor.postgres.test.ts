import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic, createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { freePort, PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'
import { sampleValue, scrape } from '../observability/prometheus-text.ts'
import { startReceiver } from './receiver.ts'

// The floor of webhook progress under saturating load (docs/webhooks.md, "The lag to expect"):
// on PostgreSQL the deliveries run on connections of their own (DB_BACKGROUND_POOL_SIZE), so
// requests that take every connection of DB_POOL_SIZE cannot stop them.
describeDb(
  'webhook deliveries while requests hold every connection of the pool',
  () => {
    let database: TestDatabase
    let writer: TestApp
    beforeAll(async () => {
      database = await createTestDatabase()
    })
    afterAll(async () => {
      await writer?.close()
      await database?.destroy()
    })

    it('go on while every request connection waits on a lock', async () => {
      const receiver = await startReceiver(() => 200)
      const applicationName = `pet-floor-${process.pid}-${Date.now()}`
      const url = new URL(database.url)
      url.searchParams.set('application_name', applicationName)
      const metricsPort = await freePort()
      const server = await startServerProcess(PET_SERVICE_BIN, {
        DATABASE_URL: url.toString(),
        DB_POOL_SIZE: '3',
        DB_BACKGROUND_POOL_SIZE: '1',
        // The held requests wait for the lock, and the others for a connection, for the whole test.
        DB_LOCK_TIMEOUT_SECONDS: '60',
        DB_CONNECT_TIMEOUT_SECONDS: '60',
        WEBHOOKS_ALLOW_INSECURE: 'true',
        SHUTDOWN_DRAIN_SECONDS: '0',
        METRICS_PORT: String(metricsPort),
      })
      // Another instance on the same database writes the events while the server's pool is taken.
      writer = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' }, { database })
      const { apiKey } = await accountWithKey(database.db, { email: 'floor@example.com' })
      const api = `http://127.0.0.1:${server.port}`
      const holder = new pg.Client({ connectionString: POSTGRES_URL })
      const observer = new pg.Client({ connectionString: POSTGRES_URL })
      await holder.connect()
      await observer.connect()
      try {
        const endpoint = await fetch(`${api}/v1/webhook_endpoint`, {
          method: 'POST',
          headers: { authorization: basic(apiKey), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ url: receiver.url, 'enabled_events[]': 'user.created' }),
        })
        expect(endpoint.status).toBe(201)

        // Every list query waits for the lock on the pets table, so the server's three request
        // connections are all taken, and the other requests queue for one (timing-free).
        await holder.query('begin')
        await holder.query(`lock table ${database.schema}.pets in access exclusive mode`)
        const pending = Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${api}/v1/pet?limit=1`, { headers: { authorization: basic(apiKey) } }),
          ),
        )
        const waitingOnLock = async () => {
          const { rows } = await observer.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
            [applicationName],
          )
          return rows[0]!.n
        }
        const requestsPool = async () => {
          const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
          return {
            used: sampleValue(samples, 'db_client_connections', { pool: 'requests', state: 'used' }),
            idle: sampleValue(samples, 'db_client_connections', { pool: 'requests', state: 'idle' }),
            waiting: sampleValue(samples, 'db_client_connection_pending_requests', { pool: 'requests' }),
          }
        }
        await waitUntil('the server’s three request connections wait for the lock', async () => {
          const pool = await requestsPool()
          return (await waitingOnLock()) === 3 && pool.used === 3 && pool.idle === 0 && pool.waiting > 0
        })

        const user = await withKey(
          writer.app,
          apiKey,
        )({ method: 'POST', url: '/v1/user', ...form({ name: 'Floor', username: 'floor' }) })
        expect(user.statusCode).toBe(201)
        const userId = (user.json() as { id: string }).id
        const delivered = () =>
          receiver.received.some((r) => {
            const event = JSON.parse(r.body) as { type: string; data: { object: { id: unknown } } }
            return event.type === 'user.created' && String(event.data.object.id) === String(userId)
          })
        await waitUntil('the server delivers the new user’s event', async () => delivered())
        // Delivered while the requests still held every connection and more waited for one.
        expect(await waitingOnLock()).toBe(3)
        expect(await requestsPool()).toMatchObject({ used: 3, idle: 0 })
        expect((await requestsPool()).waiting).toBeGreaterThan(0)

        await holder.query('commit')
        const answers = await pending
        expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      } finally {
        await holder.end()
        await observer.end()
        await receiver.close()
        server.child.kill('SIGTERM')
        expect(await server.exited).toBe(0)
      }
    }, 90_000)
  },
  { directOnly: "it counts the service's sessions on PostgreSQL, which are the pooler's there" },
)
