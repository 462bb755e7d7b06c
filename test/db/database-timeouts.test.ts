import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/database.ts'
import { databaseFailure } from '../../src/db/database-errors.ts'
import { createTestApp } from '../helpers/app.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { POOLER } from '../helpers/postgres.ts'

const TIMEOUTS = { connectMs: 1000, statementMs: 300, lockMs: 300 }

/** How long `work` took to fail, and with what. */
async function failure(work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now()
  try {
    await work()
  } catch (error) {
    return { ms: Date.now() - started, error }
  }
  throw new Error('expected a failure')
}

describeDb('database timeouts', () => {
  let database: TestDatabase
  let bounded: DatabaseHandle
  beforeAll(async () => {
    database = await createTestDatabase()
    bounded = database.reopen({ timeouts: TIMEOUTS, ...(DIALECT === 'postgres' ? { poolSize: 2 } : {}) })
  })
  afterAll(async () => {
    await bounded.close()
    await database.destroy()
  })

  if (DIALECT === 'postgres') {
    it("gives a test app's connections the DB_*_TIMEOUT_SECONDS its test asks for", async () => {
      // Tests under heavy contention raise them; a helper that dropped them made those tests flaky.
      const t = await createTestApp({ DB_LOCK_TIMEOUT_SECONDS: '7', DB_STATEMENT_TIMEOUT_SECONDS: '9' })
      try {
        // In a transaction, where a transaction pooler keeps them too (DB_POOLER=transaction).
        const setting = (name: 'lock_timeout' | 'statement_timeout') =>
          t.database.db
            .transaction()
            .execute(
              async (trx) =>
                (await sql<{ setting: string }>`select current_setting(${name}) as setting`.execute(trx))
                  .rows[0]?.setting,
            )
        expect(await setting('lock_timeout')).toBe('7s')
        expect(await setting('statement_timeout')).toBe('9s')
      } finally {
        await t.close()
      }
    })

    // Behind a transaction pooler a statement outside a transaction runs under the role's own
    // statement_timeout (docs/operations.md, "Running behind PgBouncer"), which the test roles leave unset.
    it.skipIf(POOLER === 'transaction')(
      'cancels a statement past DB_STATEMENT_TIMEOUT_SECONDS as "unavailable", and keeps the connection',
      async () => {
        const { ms, error } = await failure(() => sql`select pg_sleep(3)`.execute(bounded.db))
        expect((error as { code?: string }).code).toBe('57014')
        expect(databaseFailure(error)).toBe('unavailable')
        expect(ms).toBeLessThan(2000)
        expect((await sql<{ one: number }>`select 1 as one`.execute(bounded.db)).rows).toEqual([{ one: 1 }])
      },
    )

    it('ends a transaction left idle past the bound without taking the process down, then serves again', async () => {
      const { error } = await failure(() =>
        bounded.db.transaction().execute(async (trx) => {
          await sql`select 1`.execute(trx)
          // The server ends the session while the connection is checked out and between queries.
          await new Promise((resolve) => setTimeout(resolve, 800))
          await sql`select 1`.execute(trx)
        }),
      )
      expect(databaseFailure(error)).toBe('unavailable')
      expect((await sql<{ one: number }>`select 1 as one`.execute(bounded.db)).rows).toEqual([{ one: 1 }])
    })
  } else {
    it('waits for a write lock held elsewhere without blocking the process, then fails as "unavailable"', async () => {
      const other = new BetterSqlite3(database.location.replace(/^sqlite:/, ''))
      other.exec('begin immediate')
      let ticks = 0
      const ticker = setInterval(() => ticks++, 20)
      try {
        const { ms, error } = await failure(() =>
          sql`insert into accounts (id, email, created_at) values ('acc_lock', 'lock@example.com', '2026-01-01')`.execute(
            bounded.db,
          ),
        )
        expect((error as { code?: string }).code).toBe('SQLITE_BUSY')
        expect(databaseFailure(error)).toBe('unavailable')
        expect(ms).toBeGreaterThanOrEqual(250)
        expect(ms).toBeLessThan(2000)
        // The event loop ran all along (SQLite's own busy_timeout would have blocked it).
        expect(ticks).toBeGreaterThanOrEqual(5)
      } finally {
        clearInterval(ticker)
        other.exec('rollback')
        other.close()
      }
    })
  }
})
