import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { accountWithKey, basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { PGBOUNCER_BINARY, type PgBouncer, startPgBouncer } from '../helpers/pgbouncer.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'

/**
 * `pet-service serve` behind PgBouncer (Debian's 1.18: no `max_prepared_statements`) with its
 * defaults — no `ignore_startup_parameters` — and a pool of 5 server connections, the setup in
 * which the service used to exit at start, then answer half of 20 concurrent creates with 500
 * (docs/operations.md, "Running behind PgBouncer"). CI installs PgBouncer; elsewhere the suite
 * skips without it.
 */
describeDb(
  'the service behind PgBouncer',
  () => {
    let database: TestDatabase
    const bouncers: Partial<Record<'session' | 'transaction', PgBouncer>> = {}
    beforeAll(async () => {
      database = await createTestDatabase()
      // Round robin: a client's consecutive transactions go to different server connections, as
      // on a busy pooler, rather than back to the one it just released.
      bouncers.transaction = await startPgBouncer({
        mode: 'transaction',
        poolSize: 5,
        settings: { server_round_robin: '1' },
      })
      bouncers.session = await startPgBouncer({ mode: 'session', poolSize: 5 })
    })
    afterAll(async () => {
      await bouncers.transaction?.stop()
      await bouncers.session?.stop()
      await database?.destroy()
    })

    /** DATABASE_URL of the test database (its role) through the PgBouncer in `mode`. */
    const through = (mode: 'session' | 'transaction') => {
      const url = new URL(bouncers[mode]!.url)
      url.username = database.schema!
      return url.toString()
    }

    const serve = (mode: 'session' | 'transaction', env: Record<string, string>) =>
      startServerProcess(PET_SERVICE_BIN, {
        DATABASE_URL: through(mode),
        SHUTDOWN_DRAIN_SECONDS: '0',
        ...env,
      })

    /** 20 creates at once, then 200 one after another: every status answered, counted. */
    async function creates(server: ServerProcess): Promise<Record<number, number>> {
      const { apiKey } = await accountWithKey(database.db)
      const create = async (i: number) =>
        (
          await fetch(`http://127.0.0.1:${server.port}/v1/pet`, {
            method: 'POST',
            headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
            body: JSON.stringify({ name: `pet ${i}` }),
          })
        ).status
      const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => create(i)))
      for (let i = 0; i < 200; i++) statuses.push(await create(20 + i))
      const counted: Record<number, number> = {}
      for (const status of statuses) counted[status] = (counted[status] ?? 0) + 1
      return counted
    }

    const warningsAbout = (server: ServerProcess, setting: string) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":40') && line.includes(setting))

    describe.skipIf(PGBOUNCER_BINARY === undefined && process.env.CI !== 'true')(
      'with PgBouncer installed',
      () => {
        it('starts and answers 220 creates with 201 in transaction mode (DB_POOLER=transaction)', async () => {
          const server = await serve('transaction', { DB_POOLER: 'transaction' })
          try {
            expect(await creates(server)).toEqual({ 201: 220 })
            expect(warningsAbout(server, 'DB_PREPARED_STATEMENTS')).toEqual([])
          } finally {
            server.child.kill('SIGTERM')
            await server.exited
          }
        })

        it('starts and answers 220 creates with 201 in session mode (DB_POOLER=session), named statements on', async () => {
          // In session mode each connection of the service holds a server connection of the pool:
          // the requests' and the background work's together are the pool's five.
          const server = await serve('session', {
            DB_POOLER: 'session',
            DB_POOL_SIZE: '3',
            DB_BACKGROUND_POOL_SIZE: '2',
          })
          try {
            expect(await creates(server)).toEqual({ 201: 220 })
            expect(warningsAbout(server, 'DB_PREPARED_STATEMENTS')).toEqual([])
          } finally {
            server.child.kill('SIGTERM')
            await server.exited
          }
        })

        it('runs lost named statements again unnamed, warning once to set DB_PREPARED_STATEMENTS=false, with no 5xx', async () => {
          const server = await serve('transaction', {
            DB_POOLER: 'transaction',
            DB_PREPARED_STATEMENTS: 'true',
          })
          try {
            expect(await creates(server)).toEqual({ 201: 220 })
            expect(warningsAbout(server, 'DB_PREPARED_STATEMENTS=false')).toHaveLength(1)
          } finally {
            server.child.kill('SIGTERM')
            await server.exited
          }
        })

        it('migrates through it in transaction mode and leaves no migration lock held there', async () => {
          const pooled = openDatabase(through('transaction'), {
            poolSize: 5,
            pooler: { pooler: 'transaction', preparedStatements: false },
          })
          try {
            // Several server connections open, for the migration's statements to spread over.
            await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.1)`.execute(pooled.db)))
            await migrateToLatest(pooled.db)
          } finally {
            await pooled.close()
          }
          // Kysely's own lock was session-level: taken on one server connection, released (in
          // vain) on another, it stayed held until PgBouncer closed that connection.
          const admin = new pg.Client({ connectionString: POSTGRES_URL })
          await admin.connect()
          try {
            const { rows } = await admin.query<{ n: number }>(
              `select count(*)::int as n from pg_locks l join pg_stat_activity a using (pid)
              where l.locktype = 'advisory' and a.usename = $1`,
              [database.schema],
            )
            expect(rows[0]!.n).toBe(0)
          } finally {
            await admin.end()
          }
        })

        it('refuses to start without DB_POOLER, saying to set it to the pool mode', async () => {
          // Unset, even in a run whose servers are told DB_POOLER=transaction (TEST_PGBOUNCER).
          await expect(serve('transaction', { DB_POOLER: '' })).rejects.toThrow(
            /unsupported startup parameter: \w+.*set DB_POOLER to its pool mode \(session or transaction\)/,
          )
        })
      },
    )
  },
  // Starting a server and 220 creates through a pool of 5, on a loaded machine.
  { timeout: 120_000 },
)
