import { type Kysely, type MigrationResultSet, Migrator, type MigratorProps, sql } from 'kysely'
import {
  type DatabaseHandle,
  type DatabaseTimeouts,
  DEFAULT_DATABASE_TIMEOUTS,
  openDatabase,
} from './database.ts'
import { isPostgres } from './dialect.ts'
import { migrations } from './migrations/index.ts'
import { lockMigrations } from './postgres-migration-lock.ts'
import type { Database } from './schema.ts'

/**
 * Brings the database up to date when a process starts. On PostgreSQL the migrations run on a
 * connection of their own without the statement timeout (DB_STATEMENT_TIMEOUT_SECONDS), which
 * bounds requests: a migration may run long, or wait for another instance's to finish (the
 * migration lock is one for the whole server). SQLite has no statement timeout, and a
 * `:memory:` database exists on its one connection only, so there the handle itself migrates.
 */
export async function migrateAtStart(
  database: DatabaseHandle,
  databaseUrl: string,
  options: { timeouts?: DatabaseTimeouts } = {},
): Promise<string[]> {
  if (database.dialect === 'sqlite') return migrateToLatest(database.db)
  const migrating = openDatabase(databaseUrl, {
    poolSize: 1,
    ...(database.pooler === undefined ? {} : { pooler: database.pooler }),
    timeouts: { ...(options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS), statementMs: 0 },
  })
  try {
    return await migrateToLatest(migrating.db)
  } finally {
    await migrating.close()
  }
}

/**
 * Brings the schema up to date, under a lock, so several instances may start at once: one
 * migrates, the others wait and then find nothing left to do
 * (test/server/scale-out.postgres.test.ts starts three at once on an empty schema). On SQLite
 * Kysely's migrator takes the write lock (sqlite-migration-lock.ts). On PostgreSQL everything —
 * the lock, the migrator's bookkeeping tables, the migrations — is one transaction on one
 * connection, which a pooler in transaction mode keeps on one server connection; the lock is
 * transaction-level (postgres-migration-lock.ts) and taken first, before the bookkeeping tables
 * are created.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  if (!isPostgres(db)) return runMigrator(db, {})
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    try {
      await lockMigrations(connection)
      const applied = await runMigrator(connection, {
        disableTransactions: true,
        // Kysely would otherwise look for its bookkeeping tables in every schema of the
        // database, and may find another tenant's (or test's) copy.
        migrationTableSchema: await currentSchema(connection),
      })
      await sql`commit`.execute(connection)
      return applied
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {})
      throw error
    }
  })
}

async function runMigrator(
  db: Kysely<Database>,
  options: Pick<MigratorProps, 'disableTransactions' | 'migrationTableSchema'>,
): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...options })
  const result: MigrationResultSet = await migrator.migrateToLatest()
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'bookkeeping'
    throw new Error(`Migration ${failed} failed: ${String(result.error)}`, { cause: result.error })
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

async function currentSchema(db: Kysely<Database>): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  return rows[0]?.schema
}
