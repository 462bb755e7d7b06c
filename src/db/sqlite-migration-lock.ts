import { type Kysely, type MigrationLockOptions, SqliteAdapter, sql } from 'kysely'

/**
 * Kysely's SQLite adapter takes no migration lock (it assumes one connection), so two processes
 * on one file (a server and the admin CLI, say) could both run the same migration. Writing the
 * lock row first makes the migration transaction take SQLite's write lock before it reads which
 * migrations ran; the other process waits (busy_timeout) and then finds nothing left to do.
 */
export class LockingSqliteAdapter extends SqliteAdapter {
  // SQLite does run DDL in transactions; Kysely's default (false) would migrate without one.
  override get supportsTransactionalDdl(): boolean {
    return true
  }

  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    await sql`update ${sql.table(options.lockTable)} set is_locked = 1 where id = ${options.lockRowId}`.execute(
      db,
    )
  }

  override async releaseMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    await sql`update ${sql.table(options.lockTable)} set is_locked = 0 where id = ${options.lockRowId}`.execute(
      db,
    )
  }
}
