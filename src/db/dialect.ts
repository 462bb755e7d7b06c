import { PostgresAdapter } from 'kysely'
import type { Db } from './schema.ts'

/** Whether `db` (or a transaction of it) talks to PostgreSQL rather than SQLite. */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}
