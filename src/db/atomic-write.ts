import type { Kysely } from 'kysely'
import { isPostgres } from './dialect.ts'
import type { Database, Db } from './schema.ts'

/**
 * Runs a change whose statements are each atomic on PostgreSQL: `work` sends reads, and writes
 * that carry their own event in the same statement (the pets service's createPet, updatePet and
 * deletePet), so no transaction is needed around them there, and BEGIN and COMMIT would be two
 * of its round trips. Each statement commits as it answers, so the response still follows the
 * commit. The statements share one connection all the same: an update reads the version it
 * writes at, and queueing for a second connection between the two would widen the window in
 * which another writer moves it (test/pets/concurrent-writes.test.ts). SQLite keeps the
 * transaction, which its group commit (src/db/sqlite-group-commit.ts) shares between
 * concurrent requests.
 */
export function runAtomicWrite<T>(db: Kysely<Database>, work: (db: Db) => Promise<T>): Promise<T> {
  if (isPostgres(db)) return db.connection().execute(work)
  return db.transaction().execute(work)
}
