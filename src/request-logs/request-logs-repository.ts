import { sql } from 'kysely'
import { keysetPageOf, type PageRequest } from '../db/keyset-page.ts'
import { purgeOldestBefore } from '../db/purge-oldest.ts'
import type { Db } from '../db/schema.ts'
import type { NewRequestLog, RequestLogFilter, RequestLogRow } from './request-log.ts'

/** Many entries in one statement (the writer's batch). */
export async function insertRequestLogs(db: Db, rows: readonly NewRequestLog[]): Promise<void> {
  if (rows.length === 0) return
  await db
    .insertInto('request_log')
    .values([...rows])
    .execute()
}

export async function findRequestLog(
  db: Db,
  accountId: string,
  id: string,
): Promise<RequestLogRow | undefined> {
  return db
    .selectFrom('request_log')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function listRequestLogs(
  db: Db,
  accountId: string,
  filter: RequestLogFilter,
  page: PageRequest<string>,
): Promise<{ rows: RequestLogRow[]; hasMore: boolean } | undefined> {
  return keysetPageOf(db.selectFrom('request_log').where('account_id', '=', accountId), page, (entries) => {
    let q = entries.selectAll()
    if (filter.statusClass !== undefined) {
      const low = Number(filter.statusClass[0]) * 100
      q = q.where('status', '>=', low).where('status', '<', low + 100)
    }
    if (filter.method !== undefined) q = q.where('method', '=', filter.method)
    if (filter.path !== undefined) {
      // A prefix compared exactly (LIKE folds case on SQLite, and would read `_` and `%`).
      const prefix = filter.path
      q = q.where(sql<string>`substr(path, 1, ${prefix.length})`, '=', prefix)
    }
    if (filter.credentialId !== undefined) q = q.where('credential_id', '=', filter.credentialId)
    if (filter.requestId !== undefined) q = q.where('request_id', '=', filter.requestId)
    return q
  })
}

/** Deletes up to `batch` of the oldest entries written before `cutoff`; answers how many. */
export function purgeRequestLogsBefore(db: Db, cutoff: string, batch: number): Promise<number> {
  return purgeOldestBefore(db, 'request_log', cutoff, batch)
}
