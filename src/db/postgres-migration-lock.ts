import { type Kysely, PostgresAdapter, sql } from 'kysely'

/** Kysely's own key for its PostgreSQL migration lock, so older versions' migrators wait for ours too. */
const MIGRATION_LOCK = sql.lit('3853314791062309107')

/** Another instance's migrations may take long: wait for them up to an hour, as Kysely does. */
const WAIT_FOR_OTHER_MIGRATIONS_MS = 3_600_000

/**
 * Kysely's PostgreSQL adapter takes a session-level advisory lock outside the migrations'
 * transaction and releases it after: through a pooler in transaction mode (PgBouncer), the lock,
 * the transaction and the release may each run on a different server connection, and the lock
 * stays held there. Here the lock is transaction-level, taken in the migrations' transaction
 * (src/db/migrate.ts runs the migrator inside one) and released by its commit or rollback, so it
 * holds through any pooler.
 */
export class TransactionLockPostgresAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await lockMigrations(db)
  }

  override async releaseMigrationLock(): Promise<void> {
    // Released with the transaction.
  }
}

/**
 * Takes the migration lock until the end of the current transaction. The wait for it is long
 * (another instance migrating), but lock_timeout goes back to what it was before the
 * migrations' own statements wait for tables: each step reads the one before it, which orders
 * them (as src/idempotency/key-claim-statement.ts does).
 */
export async function lockMigrations<DB>(db: Kysely<DB>): Promise<void> {
  await sql`with lock_timeout_before as (select current_setting('lock_timeout') as setting),
      wait_long as (
        select set_config('lock_timeout', ${sql.lit(String(WAIT_FOR_OTHER_MIGRATIONS_MS))}, true) as set
          from lock_timeout_before),
      locked as (select pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint) as locked from wait_long)
    select set_config('lock_timeout', lock_timeout_before.setting, true) as restored
      from lock_timeout_before, locked`.execute(db)
}
