import { type Kysely, type MigrationResultSet, Migrator, sql } from 'kysely'
import {
  type DatabaseHandle,
  type DatabaseTimeouts,
  DEFAULT_DATABASE_TIMEOUTS,
  openDatabase,
} from './database.ts'
import { isPostgres } from './dialect.ts'
import { migrations } from './migrations/index.ts'
import type { Database } from './schema.ts'

/**
 * Brings the database up to date when a process starts. On PostgreSQL the migrations run on a
 * connection of their own without the statement timeout (DB_STATEMENT_TIMEOUT_SECONDS), which
 * bounds requests: a migration may run long, or wait for another instance's to finish (the
 * migrator's advisory lock is one for the whole server). SQLite has no statement timeout, and a
 * `:memory:` database exists on its one connection only, so there the handle itself migrates.
 */
export async function migrateAtStart(
  database: DatabaseHandle,
  databaseUrl: string,
  options: { timeouts?: DatabaseTimeouts; searchPath?: string } = {},
): Promise<string[]> {
  if (database.dialect === 'sqlite') return migrateToLatest(database.db)
  const migrating = openDatabase(databaseUrl, {
    poolSize: 1,
    ...(options.searchPath === undefined ? {} : { searchPath: options.searchPath }),
    timeouts: { ...(options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS), statementMs: 0 },
  })
  try {
    return await migrateToLatest(migrating.db)
  } finally {
    await migrating.close()
  }
}

/**
 * Brings the schema up to date. Kysely's migrator takes a lock first (a session-level advisory
 * lock on PostgreSQL, held until the migrations' transaction has committed; the write lock on
 * SQLite, see sqlite-migration-lock.ts), so several instances may start at once: one migrates,
 * the others wait and then find nothing left to do. test/server/scale-out.postgres.test.ts
 * starts three at once on an empty schema.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // On PostgreSQL, name the schema of the bookkeeping tables: otherwise Kysely looks for them
    // in every schema of the database and may find another tenant's (or test's) copy.
    ...(await postgresSchema(db)),
  })
  const result: MigrationResultSet = await migrator.migrateToLatest()
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'bookkeeping'
    throw new Error(`Migration ${failed} failed: ${String(result.error)}`, { cause: result.error })
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

async function postgresSchema(db: Kysely<Database>): Promise<{ migrationTableSchema?: string }> {
  if (!isPostgres(db)) return {}
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  const schema = rows[0]?.schema
  return schema === undefined ? {} : { migrationTableSchema: schema }
}
