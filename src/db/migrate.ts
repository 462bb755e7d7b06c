import { type Kysely, type MigrationResultSet, Migrator, PostgresAdapter, sql } from 'kysely'
import { migrations } from './migrations/index.ts'
import type { Database } from './schema.ts'

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
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return {}
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  const schema = rows[0]?.schema
  return schema === undefined ? {} : { migrationTableSchema: schema }
}
