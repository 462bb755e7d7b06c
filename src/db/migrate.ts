import { type Kysely, type MigrationResultSet, Migrator } from 'kysely'
import { migrations } from './migrations/index.ts'
import type { Database } from './schema.ts'

/**
 * Brings the schema up to date. Kysely's migrator takes a lock first (a transaction-scoped
 * advisory lock on PostgreSQL; SQLite's own write lock), so several instances may start at
 * once: one migrates, the others wait and then find nothing left to do.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  })
  const result: MigrationResultSet = await migrator.migrateToLatest()
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new Error(`Migration ${failed} failed: ${String(result.error)}`, { cause: result.error })
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
