import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tracer } from '@opentelemetry/api'
import pg from 'pg'
import { describe } from 'vitest'
import { type DatabaseHandle, type DatabaseTimeouts, openDatabase } from '../../src/db/database.ts'
import { migrateAtStart, migrateToLatest } from '../../src/db/migrate.ts'
import { randomBase62 } from '../../src/lib/ids.ts'
import { POSTGRES_URL, postgresReachable } from './postgres.ts'

export type TestDialect = 'sqlite' | 'postgres'
export const DIALECT: TestDialect = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite'

const available = DIALECT === 'sqlite' || (await postgresReachable())

/** describe() that runs on the project's dialect, or skips (with the reason in its name) when absent. */
export function describeDb(name: string, body: () => void, options: { timeout?: number } = {}): void {
  if (available) {
    describe(`${name} [${DIALECT}]`, options, body)
    return
  }
  // Reason for the skip: the PostgreSQL server is absent and not required (CI sets
  // REQUIRE_POSTGRES=1, which makes its absence a failure); the global setup prints a banner.
  describe.skip(`${name} [${DIALECT}: server not reachable]`, body) // skipped: no PostgreSQL server here
}

export interface TestDatabase extends DatabaseHandle {
  /** DATABASE_URL that reaches this same database (for child processes). */
  url: string
  /** For PostgreSQL: the schema this test database lives in. */
  schema?: string
  destroy(): Promise<void>
}

/**
 * A fresh database (migrated unless asked not to) of the project's dialect: a SQLite file in a temporary folder,
 * or a new schema on the test PostgreSQL server. destroy() removes it.
 */
export async function createTestDatabase(
  options: { migrate?: boolean; tracer?: Tracer; timeouts?: DatabaseTimeouts } = {},
): Promise<TestDatabase> {
  const migrate = options.migrate ?? true
  const traced = {
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
  }
  if (DIALECT === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'pet-service-test-'))
    const url = `sqlite:${join(dir, 'test.db')}`
    const handle = openDatabase(url, traced)
    if (migrate) await migrateToLatest(handle.db)
    return {
      ...handle,
      url,
      destroy: async () => {
        await handle.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const schema = `t_${randomBase62(12).toLowerCase()}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const handle = openDatabase(POSTGRES_URL, { searchPath: schema, poolSize: 5, ...traced })
  if (migrate) await migrateAtStart(handle, POSTGRES_URL, { searchPath: schema })
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    ...handle,
    url: url.toString(),
    schema,
    destroy: async () => {
      await handle.close()
      const cleanup = new pg.Client({ connectionString: POSTGRES_URL })
      await cleanup.connect()
      await cleanup.query(`drop schema ${schema} cascade`)
      await cleanup.end()
    },
  }
}
