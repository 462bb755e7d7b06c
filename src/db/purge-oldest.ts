import { type RawBuilder, sql } from 'kysely'
import type { Db } from './schema.ts'

/** The append-mostly tables purged by age: each has a `seq` primary key and a `created_at`. */
export type PurgedTable = 'events' | 'request_log' | 'webhook_deliveries'

/**
 * Deletes up to `batch` of the oldest rows of `table` (among those `only` keeps) created before
 * `cutoff`; answers how many. Reads the oldest rows by `seq` (the primary key) and deletes the
 * run of them that is past the cutoff, so a purge never scans the table for a `created_at` it
 * has no index on. Clocks of several instances may disagree a little: a row slightly out of
 * order waits for the next batch.
 */
export async function purgeOldestBefore(
  db: Db,
  table: PurgedTable,
  cutoff: string,
  batch: number,
  only: RawBuilder<boolean> = sql<boolean>`1 = 1`,
): Promise<number> {
  const { rows } = await sql<{ seq: number | string; created_at: string }>`
    select seq, created_at from ${sql.table(table)} where ${only} order by seq asc limit ${batch}
  `.execute(db)
  let last: number | undefined
  for (const row of rows) {
    if (row.created_at >= cutoff) break
    last = Number(row.seq)
  }
  if (last === undefined) return 0
  const result = await sql`delete from ${sql.table(table)} where seq <= ${last} and ${only}`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}
