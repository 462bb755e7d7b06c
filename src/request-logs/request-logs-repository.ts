import { CompiledQuery, sql } from 'kysely'
import { isPostgres } from '../db/dialect.ts'
import { keysetPageOf, type PageRequest } from '../db/keyset-page.ts'
import { nameStatement } from '../db/named-statements.ts'
import { purgeOldestBefore } from '../db/purge-oldest.ts'
import type { Db } from '../db/schema.ts'
import type { NewRequestLog, RequestLogFilter, RequestLogRow } from './request-log.ts'

/** Each stored column of an entry, with its SQL type (for PostgreSQL's json_to_recordset). */
const COLUMNS: { readonly [C in keyof NewRequestLog]-?: 'text' | 'integer' } = {
  id: 'text',
  account_id: 'text',
  created_at: 'text',
  method: 'text',
  path: 'text',
  status: 'integer',
  error_code: 'text',
  duration_ms: 'integer',
  request_id: 'text',
  credential_kind: 'text',
  credential_id: 'text',
  client_address: 'text',
  api_version: 'text',
  request_headers: 'text',
  request_body: 'text',
  response_body: 'text',
}
const NAMES = Object.keys(COLUMNS) as (keyof NewRequestLog)[]
const INTO = `insert into "request_log" (${NAMES.join(', ')}) `
const POSTGRES_INSERT = `${INTO}select ${NAMES.join(', ')} from json_to_recordset($1::json) as r(${NAMES.map(
  (name) => `${name} ${COLUMNS[name]}`,
).join(', ')})`
nameStatement(POSTGRES_INSERT)
/** SQLite's statements, by how many rows each takes: a batch is a few of them, whatever its size. */
const SQLITE_INSERTS = ([64, 16, 4, 1] as const).map((size) => ({
  size,
  text: `${INTO}values ${Array.from({ length: size }, () => `(${NAMES.map(() => '?').join(', ')})`).join(', ')}`,
}))

/**
 * Many entries at once (the writer's batch), in statements whose text does not depend on the
 * batch's size, so that each is parsed and planned once and nothing compiles a query per batch.
 * On PostgreSQL one statement takes the batch as one JSON array (json_to_recordset): nothing
 * binds a parameter per value. On SQLite, whose json_each costs more per row than binding,
 * rows go 64, 16, 4 or 1 at a time through a multi-row VALUES, in one transaction.
 */
export async function insertRequestLogs(db: Db, rows: readonly NewRequestLog[]): Promise<void> {
  if (rows.length === 0) return
  if (isPostgres(db)) {
    const json = JSON.stringify(rows, (_key, value: unknown) => wellFormed(value))
    await db.executeQuery(CompiledQuery.raw(POSTGRES_INSERT, [json]))
    return
  }
  await db.transaction().execute(async (trx) => {
    let next = 0
    for (const { size, text } of SQLITE_INSERTS) {
      for (; rows.length - next >= size; next += size) {
        const parameters: unknown[] = []
        for (const row of rows.slice(next, next + size))
          for (const name of NAMES) parameters.push(wellFormed(row[name] ?? null))
        await trx.executeQuery(CompiledQuery.raw(text, parameters))
      }
    }
  })
}

/**
 * A lone surrogate as U+FFFD: in the JSON it would be an escape PostgreSQL refuses, failing the
 * whole batch (other requests' entries with it), and SQLite would store it as bytes no UTF-8
 * reader takes.
 */
function wellFormed(value: unknown): unknown {
  return typeof value === 'string' ? value.toWellFormed() : value
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
