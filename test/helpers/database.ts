import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tracer } from '@opentelemetry/api'
import pg from 'pg'
import { describe } from 'vitest'
import { loadConfig } from '../../src/config/config.ts'
import {
  type DatabaseHandle,
  type DatabaseOptions,
  type DatabaseTimeouts,
  openDatabase,
  type PoolerSettings,
  poolerSettings,
} from '../../src/db/database.ts'
import { migrateAtStart, migrateToLatest } from '../../src/db/migrate.ts'
import { randomBase62 } from '../../src/lib/ids.ts'
import { POOLER, POSTGRES_APP_URL, POSTGRES_URL, postgresReachable } from './postgres.ts'

export type TestDialect = 'sqlite' | 'postgres'
export const DIALECT: TestDialect = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite'

const available = DIALECT === 'sqlite' || (await postgresReachable())

/**
 * describe() that runs on the project's dialect, or skips (with the reason in its name) when absent.
 * `directOnly`: why the suite observes what a PostgreSQL session of its own shows, which a run
 * behind a pooler in transaction mode (TEST_PGBOUNCER=transaction) does not give; it skips there.
 */
export function describeDb(
  name: string,
  body: () => void,
  options: { timeout?: number; directOnly?: string } = {},
): void {
  const { directOnly, ...describeOptions } = options
  if (available && directOnly !== undefined && DIALECT === 'postgres' && POOLER === 'transaction') {
    // Reason for the skip: the suite counts the service's own PostgreSQL sessions or statements,
    // which behind a transaction pooler are the pooler's; it runs against PostgreSQL directly.
    describe.skip(`${name} [${DIALECT} behind a transaction pooler: ${directOnly}]`, body) // skipped: direct PostgreSQL only
    return
  }
  if (available) {
    describe(`${name} [${DIALECT}]`, describeOptions, body)
    return
  }
  // Reason for the skip: the PostgreSQL server is absent and not required (CI sets
  // REQUIRE_POSTGRES=1, which makes its absence a failure); the global setup prints a banner.
  describe.skip(`${name} [${DIALECT}: server not reachable]`, body) // skipped: no PostgreSQL server here
}

/** The pooler settings of the run (DB_POOLER, with DB_PREPARED_STATEMENTS' default for it). */
export const TEST_POOLER: PoolerSettings = poolerSettings(loadConfig({ DB_POOLER: POOLER }))

export interface TestDatabase extends DatabaseHandle {
  /** DATABASE_URL that reaches this same database (for child processes). */
  url: string
  /** For PostgreSQL: the schema this test database lives in, and the role that works in it. */
  schema?: string
  /** Another handle on this same database (another instance's), through the run's pooler. */
  reopen(options?: DatabaseOptions): DatabaseHandle
  destroy(): Promise<void>
}

/**
 * A fresh database (migrated unless asked not to) of the project's dialect: a SQLite file in a temporary folder,
 * or a new schema on the test PostgreSQL server. destroy() removes it.
 *
 * On PostgreSQL each test database is a schema and a role of the same name, whose search_path
 * names the schema (`alter role … set`): a setting of the role holds on every server connection
 * a pooler in transaction mode picks, where a session's own setting would not. Apps connect as
 * that role, through PgBouncer when the run has one (POSTGRES_APP_URL); the schema and the role
 * are made and dropped directly.
 */
export async function createTestDatabase(
  options: { migrate?: boolean; tracer?: Tracer; timeouts?: DatabaseTimeouts; pooler?: PoolerSettings } = {},
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
      reopen: (more = {}) => openDatabase(url, more),
      destroy: async () => {
        await handle.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const schema = `t_${randomBase62(12).toLowerCase()}`
  await asAdmin(
    `create role ${schema} login superuser`,
    `alter role ${schema} set search_path = ${schema}`,
    `create schema ${schema} authorization ${schema}`,
  )
  const app = new URL(POSTGRES_APP_URL)
  app.username = schema
  const url = app.toString()
  const pooler = options.pooler ?? TEST_POOLER
  const handle = openDatabase(url, { poolSize: 5, pooler, ...traced })
  if (migrate) await migrateAtStart(handle, url)
  return {
    ...handle,
    url,
    schema,
    reopen: (more = {}) => openDatabase(url, { pooler, ...more }),
    destroy: async () => {
      await handle.close()
      // A pooler may still hold the role's server connections.
      await asAdmin(
        `select pg_terminate_backend(pid) from pg_stat_activity where usename = '${schema}'`,
        `drop schema ${schema} cascade`,
        `drop role ${schema}`,
      )
    },
  }
}

/** Runs statements on the test server directly, as its administrator. */
async function asAdmin(...statements: string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  try {
    for (const statement of statements) await admin.query(statement)
  } finally {
    await admin.end()
  }
}
