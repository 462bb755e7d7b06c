import type { SelectQueryBuilder } from 'kysely'
import { sql } from 'kysely'
import { isPostgres } from '../db/dialect.ts'
import { keysetPageOf, type Page } from '../db/keyset-page.ts'
import { prepareQuery } from '../db/prepared-query.ts'
import { purgeOldestBefore } from '../db/purge-oldest.ts'
import type { Database, Db } from '../db/schema.ts'
import type { EventRow, NewEventRow } from './event.ts'
import type { EventFilter } from './event-filter.ts'

const insertEventQuery = prepareQuery<NewEventRow, unknown>((db, p) =>
  db.insertInto('events').values({
    id: p('id'),
    account_id: p('account_id'),
    type: p('type'),
    object_id: p('object_id'),
    data: p('data'),
    previous_attributes: p('previous_attributes'),
    created_at: p('created_at'),
  }),
)

/** Appends an event row, in the caller's transaction (see events-service.ts). */
export async function insertEvent(db: Db, row: NewEventRow): Promise<void> {
  await insertEventQuery.execute(db, row)
}

const COLUMNS = [
  'seq',
  'id',
  'account_id',
  'type',
  'object_id',
  'data',
  'previous_attributes',
  'created_at',
] as const

type EventQuery = SelectQueryBuilder<Database, 'events', EventRow>

/** The filter as SQL; the same rules as matchesFilter (event-filter.ts). */
function filtered(query: EventQuery, filter: EventFilter): EventQuery {
  let q = query
  if (filter.objectId !== undefined) q = q.where('object_id', '=', filter.objectId)
  if (filter.createdGte !== undefined) q = q.where('created_at', '>=', filter.createdGte)
  if (filter.createdLte !== undefined) q = q.where('created_at', '<=', filter.createdLte)
  const types = filter.types
  if (types !== undefined) {
    q = q.where((eb) =>
      eb.or([
        ...(types.exact.length > 0 ? [eb('type', 'in', types.exact)] : []),
        // The prefixes are known families (letters only), so no LIKE wildcard hides in them.
        ...types.prefixes.map((p) => eb('type', 'like', `${p}%`)),
      ]),
    )
  }
  return q
}

export async function findEvent(db: Db, accountId: string, id: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
}

export interface EventListQuery {
  limit: number
  startingAfter?: string
  endingBefore?: string
  filter: EventFilter
}

/** Newest first, keyset on `seq`; undefined when a cursor names no event of the account. */
export function listEvents(
  db: Db,
  accountId: string,
  query: EventListQuery,
): Promise<Page<EventRow> | undefined> {
  return keysetPageOf(db.selectFrom('events').where('account_id', '=', accountId), query, (events) =>
    filtered(events.select(COLUMNS), query.filter),
  )
}

/** An account's events after `afterSeq`, oldest first (a stream's replay). */
export async function eventsOfAccountAfter(
  db: Db,
  accountId: string,
  afterSeq: number,
  filter: EventFilter,
  limit: number,
): Promise<EventRow[]> {
  return filtered(
    db.selectFrom('events').select(COLUMNS).where('account_id', '=', accountId).where('seq', '>', afterSeq),
    filter,
  )
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute()
}

/** Every account's events after `afterSeq`, oldest first (the stream poller). */
export async function eventsAfter(db: Db, afterSeq: number, limit: number): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .select(COLUMNS)
    .where('seq', '>', afterSeq)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute()
}

/** Events with these sequence numbers (a poller re-reading numbers it saw skipped). */
export async function eventsWithSeq(db: Db, seqs: readonly number[]): Promise<EventRow[]> {
  if (seqs.length === 0) return []
  return db.selectFrom('events').select(COLUMNS).where('seq', 'in', seqs).orderBy('seq', 'asc').execute()
}

/**
 * The transactions, other than this one, that hold a write lock on the events table now
 * (PostgreSQL; by virtual transaction id, which a transaction has from its start): those that
 * have inserted an event and not ended are among them (see seq-holes.ts). Undefined on SQLite,
 * whose transactions commit one at a time. pg_locks lists fast-path locks too
 * (https://www.postgresql.org/docs/15/view-pg-locks.html).
 */
export async function openEventWriters(db: Db): Promise<Set<string> | undefined> {
  if (!isPostgres(db)) return undefined
  const { rows } = await sql<{ vxid: string }>`
    select distinct virtualtransaction as vxid from pg_locks
    where locktype = 'relation'
      and database = (select oid from pg_database where datname = current_database())
      and relation = to_regclass('events')
      and mode <> 'AccessShareLock'
      and granted
      and pid <> pg_backend_pid()`.execute(db)
  return new Set(rows.map((r) => r.vxid))
}

export async function lastEventSeq(db: Db): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select(sql<number | string | null>`max(seq)`.as('seq'))
    .executeTakeFirst()
  return Number(row?.seq ?? 0)
}

/** Deletes up to `batch` of the oldest events created before `cutoff`; answers how many. */
export function purgeEventsBefore(db: Db, cutoff: string, batch: number): Promise<number> {
  return purgeOldestBefore(db, 'events', cutoff, batch)
}

export async function deleteAllEventsOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('events').where('account_id', '=', accountId).execute()
}
