import { type Insertable, type Selectable, sql, type Updateable } from 'kysely'
import { isPostgres } from '../db/dialect.ts'
import { keysetPageOf, type PageRequest } from '../db/keyset-page.ts'
import { purgeOldestBefore } from '../db/purge-oldest.ts'
import type { Db, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.ts'
import type { AttemptRow, EndpointRow } from './webhook-endpoint.ts'

export type DeliveryRow = Selectable<WebhookDeliveriesTable>

export type Page = PageRequest<string>

// --- endpoints ---------------------------------------------------------------------------

export async function insertEndpoint(
  db: Db,
  row: Omit<Insertable<WebhookEndpointsTable>, 'seq'>,
): Promise<EndpointRow> {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow()
}

/**
 * Makes the rest of the transaction the only one adding endpoints to this account. SQLite needs
 * nothing: a transaction holds the database's one write lock from its start. PostgreSQL takes an
 * advisory transaction lock on the account
 * (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS).
 */
export async function lockEndpointsOfAccount(db: Db, accountId: string): Promise<void> {
  if (!isPostgres(db)) return
  await sql`select pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext(${accountId}))`.execute(db)
}

export async function countEndpoints(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

export async function findEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The endpoint row, locked for the transaction's update on PostgreSQL (SQLite has one writer). */
export async function findEndpointForUpdate(
  db: Db,
  accountId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  let q = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
  if (isPostgres(db)) q = q.forUpdate()
  return q.executeTakeFirst()
}

export async function listEndpoints(
  db: Db,
  accountId: string,
  page: Page,
): Promise<{ rows: EndpointRow[]; hasMore: boolean } | undefined> {
  return keysetPageOf(
    db.selectFrom('webhook_endpoints').where('account_id', '=', accountId),
    page,
    (endpoints) => endpoints.selectAll(),
  )
}

export async function updateEndpointRow(
  db: Db,
  id: string,
  changes: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow> {
  return db
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteEndpointRow(db: Db, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The enabled endpoints of these accounts, for the fan-out. */
export async function enabledEndpointsOf(db: Db, accountIds: readonly string[]): Promise<EndpointRow[]> {
  if (accountIds.length === 0) return []
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', 'in', accountIds)
    .where('status', '=', 'enabled')
    .execute()
}

export async function endpointsByIds(db: Db, ids: readonly string[]): Promise<EndpointRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute()
}

// --- backlog (metrics) ------------------------------------------------------------------

/**
 * What waits to be delivered, all accounts together: open deliveries (pending or retrying), the
 * earliest due time of an enabled endpoint's (of the first `endpoints` endpoints with open
 * deliveries, see endpointsWithOpenDeliveries), and the fan-out cursor (the events past it are
 * not yet fanned out).
 */
export async function deliveryBacklog(
  db: Db,
  endpoints: number,
): Promise<{ open: number; oldestDueAt: string | null; fanOutCursor: number | undefined }> {
  const open = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(sql<boolean>`status in ('pending', 'retrying')`)
    .executeTakeFirst()
  let oldestDueAt: string | null = null
  for (const endpoint of await endpointsWithOpenDeliveries(db, { after: '', limit: endpoints })) {
    if (endpoint.dueAt !== null && (oldestDueAt === null || endpoint.dueAt < oldestDueAt))
      oldestDueAt = endpoint.dueAt
  }
  const cursor = await db
    .selectFrom('webhook_cursors')
    .select('seq')
    .where('name', '=', FAN_OUT_CURSOR)
    .executeTakeFirst()
  return {
    open: Number(open?.n ?? 0),
    oldestDueAt,
    fanOutCursor: cursor === undefined ? undefined : Number(cursor.seq),
  }
}

// --- fan-out cursor ----------------------------------------------------------------------

/** The name of the fan-out's row in webhook_cursors. */
export const FAN_OUT_CURSOR = 'fan_out'

/**
 * The fan-out cursor, locked for this transaction. On PostgreSQL `SKIP LOCKED` makes a second
 * instance skip the round (undefined) rather than wait while another one fans out.
 */
export async function lockCursor(db: Db, name: string): Promise<number | undefined> {
  let q = db.selectFrom('webhook_cursors').select('seq').where('name', '=', name)
  if (isPostgres(db)) q = q.forUpdate().skipLocked()
  const row = await q.executeTakeFirst()
  return row === undefined ? undefined : Number(row.seq)
}

export async function saveCursor(db: Db, name: string, seq: number, at: string): Promise<void> {
  await db.updateTable('webhook_cursors').set({ seq, updated_at: at }).where('name', '=', name).execute()
}

// --- deliveries --------------------------------------------------------------------------

export type NewDelivery = Omit<Insertable<WebhookDeliveriesTable>, 'seq'>

/** Inserts deliveries; a fan-out row already there (same dedupe_key) is left as it is. */
export async function insertDeliveries(db: Db, rows: readonly NewDelivery[]): Promise<void> {
  // Bounded statement size: SQLite allows 32766 parameters, 16 columns a row.
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .execute()
  }
}

/** An endpoint with open deliveries, and when the first of them is due (null: none is). */
export interface EndpointDue {
  endpointId: string
  accountId: string
  /** The earliest due time of its open deliveries, when it is enabled; null otherwise. */
  dueAt: string | null
}

/**
 * The endpoints that have open deliveries, in id order (the database's collation) after `after`,
 * at most `limit` of them, each with its account and its earliest due time: what the claim
 * shares out between accounts (src/webhooks/fair-share.ts). A loose index scan over the due index
 * (https://wiki.postgresql.org/wiki/Loose_indexscan): a few index entries per endpoint, however
 * many deliveries each one has waiting.
 */
export async function endpointsWithOpenDeliveries(
  db: Db,
  options: { after: string; limit: number },
): Promise<EndpointDue[]> {
  const { rows } = await endpointsWithOpenDeliveriesQuery(options).execute(db)
  return rows.map((r) => ({
    endpointId: r.endpoint_id,
    accountId: r.account_id,
    dueAt: r.status === 'enabled' ? r.due_at : null,
  }))
}

/** The query of endpointsWithOpenDeliveries (test/webhooks/claim-plan.test.ts reads its plan). */
export function endpointsWithOpenDeliveriesQuery(options: { after: string; limit: number }) {
  // Literal statuses: the partial index names them (see claimCandidates).
  return sql<{ endpoint_id: string; account_id: string; status: string; due_at: string | null }>`
    with recursive open_endpoints(id, n) as (
      select (select endpoint_id from webhook_deliveries
              where status in ('pending', 'retrying') and endpoint_id > ${options.after}
              order by endpoint_id limit 1), 1
      union all
      select (select endpoint_id from webhook_deliveries
              where status in ('pending', 'retrying') and endpoint_id > o.id
              order by endpoint_id limit 1), o.n + 1
      from open_endpoints o
      where o.id is not null and o.n < ${options.limit}
    )
    select o.n, o.id as endpoint_id, e.account_id, e.status,
      (select d.next_attempt_at from webhook_deliveries d
       where d.status in ('pending', 'retrying') and d.endpoint_id = o.id and d.next_attempt_at is not null
       order by d.next_attempt_at limit 1) as due_at
    from open_endpoints o
    join webhook_endpoints e on e.id = o.id
    order by o.n`
}

/**
 * Takes up to `limit` due deliveries of one endpoint for this worker until `lockedUntil`: open
 * (pending or retrying), due, not held by another worker, the endpoint enabled, and with no open
 * delivery of an earlier event of the same object to the same endpoint (order per object). On
 * PostgreSQL `FOR UPDATE SKIP LOCKED` lets several instances claim at once without taking the
 * same row; run it in a transaction, so that the rows stay locked until their lease is written.
 */
export async function claimDue(db: Db, options: ClaimOptions): Promise<DeliveryRow[]> {
  await useClaimPlan(db)
  const ids = (await claimCandidates(db, options).execute()).map((r) => r.id)
  if (ids.length === 0) return []
  return db
    .updateTable('webhook_deliveries')
    .set({ locked_until: options.lockedUntil })
    .where('id', 'in', ids)
    .returningAll()
    .execute()
}

/** The claim's transaction reads in index order (see claimCandidates); the setting ends with it. */
export async function useClaimPlan(db: Db): Promise<void> {
  if (isPostgres(db)) await sql`set local enable_sort = off`.execute(db)
}

export interface ClaimOptions {
  endpointId: string
  now: string
  lockedUntil: string
  limit: number
}

/**
 * The claim's choice, shaped so that its cost is the rows it takes, whatever the statistics say.
 * A queue table's statistics are always stale: it fills in a burst faster than autovacuum
 * analyses it, and PostgreSQL, still believing it holds a handful of open rows, would check the
 * order for every open row and sort them all, a claim growing with the queue. So the query reads only the deliveries table, in the endpoint's due index order, and
 * stops at the limit: the endpoint and the order are checked per row read, by correlated
 * subqueries (PostgreSQL does not turn those into joins), and useClaimPlan turns sorting off for
 * the claim's transaction, leaving the index as the only way to the order asked for.
 * test/webhooks/claim-plan.test.ts holds the claim to all that.
 */
export function claimCandidates(db: Db, options: ClaimOptions) {
  const candidates = db
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    // Literal statuses (not parameters): the partial indexes name them, and SQLite uses a
    // partial index only when the query's condition matches its WHERE as written.
    .where(sql<boolean>`d.status in ('pending', 'retrying')`)
    .where('d.endpoint_id', '=', options.endpointId)
    .where('d.next_attempt_at', '<=', options.now)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', options.now)]))
    .where(
      (eb) =>
        eb.selectFrom('webhook_endpoints as e').select('e.status').whereRef('e.id', '=', 'd.endpoint_id'),
      '=',
      'enabled',
    )
    .where(
      (eb) =>
        eb
          .selectFrom('webhook_deliveries as earlier')
          .select('earlier.seq')
          .whereRef('earlier.endpoint_id', '=', 'd.endpoint_id')
          .whereRef('earlier.object_id', '=', 'd.object_id')
          .where(sql<boolean>`earlier.status in ('pending', 'retrying')`)
          // A range on the index's last column, then the tie-break (a resend shares its event_seq).
          .where('earlier.event_seq', '<=', (eb) => eb.ref('d.event_seq'))
          .where((eb) =>
            eb.or([
              eb('earlier.event_seq', '<', eb.ref('d.event_seq')),
              eb('earlier.seq', '<', eb.ref('d.seq')),
            ]),
          )
          .limit(1),
      'is',
      null,
    )
    .orderBy('d.next_attempt_at')
    .orderBy('d.seq')
    .limit(options.limit)
  return isPostgres(db) ? candidates.forUpdate('d').skipLocked() : candidates
}

/**
 * A disabled endpoint's open deliveries wait with no due time, and enabling the endpoint makes
 * them due again (resumeDeliveries): then, not at the time they were first due.
 */
export async function holdDeliveries(db: Db, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: null })
    .where('endpoint_id', '=', endpointId)
    .where(sql<boolean>`status in ('pending', 'retrying')`)
    .where('next_attempt_at', 'is not', null)
    .execute()
}

/** The held deliveries of an endpoint enabled again: due at `at` (now), oldest first as before. */
export async function resumeDeliveries(db: Db, endpointId: string, at: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: at })
    .where('endpoint_id', '=', endpointId)
    .where(sql<boolean>`status in ('pending', 'retrying')`)
    .where('next_attempt_at', 'is', null)
    .execute()
}

/**
 * The delivery log is kept as long as the events it delivered (EVENTS_RETENTION_DAYS): deletes
 * up to `batch` of the oldest finished deliveries (succeeded or failed) created before `cutoff`,
 * their attempts with them (the foreign key cascades); answers how many deliveries. Open ones
 * stay, however old: a disabled endpoint's wait to be sent once it is enabled again.
 */
export function purgeFinishedDeliveriesBefore(db: Db, cutoff: string, batch: number): Promise<number> {
  return purgeOldestBefore(
    db,
    'webhook_deliveries',
    cutoff,
    batch,
    sql<boolean>`status in ('succeeded', 'failed')`,
  )
}

/** Gives claimed deliveries back (on shutdown), due at once for whichever worker comes next. */
export async function releaseDeliveries(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await db.updateTable('webhook_deliveries').set({ locked_until: null }).where('id', 'in', ids).execute()
}

export async function updateDelivery(
  db: Db,
  id: string,
  changes: Updateable<WebhookDeliveriesTable>,
): Promise<void> {
  await db.updateTable('webhook_deliveries').set(changes).where('id', '=', id).execute()
}

/** The first attempt's time of a delivery (the start of its retry window), or undefined. */
export async function firstAttemptAt(db: Db, deliveryId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_attempts')
    .select('attempted_at')
    .where('delivery_id', '=', deliveryId)
    .orderBy('seq', 'asc')
    .limit(1)
    .executeTakeFirst()
  return row?.attempted_at
}

// --- attempts (the delivery log) -----------------------------------------------------------

export async function insertAttempt(
  db: Db,
  row: Omit<Insertable<WebhookAttemptsTable>, 'seq'>,
): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute()
}

export async function listAttempts(
  db: Db,
  accountId: string,
  endpointId: string,
  filters: { eventId?: string; status?: string },
  page: Page,
): Promise<{ rows: AttemptRow[]; hasMore: boolean } | undefined> {
  const ofEndpoint = db
    .selectFrom('webhook_attempts')
    .where('account_id', '=', accountId)
    .where('endpoint_id', '=', endpointId)
  return keysetPageOf(ofEndpoint, page, (attempts) =>
    attempts
      .selectAll()
      .$if(filters.eventId !== undefined, (q) => q.where('event_id', '=', filters.eventId!))
      .$if(filters.status !== undefined, (q) =>
        q.where('status', '=', filters.status as AttemptRow['status']),
      ),
  )
}

/** A success ends the endpoint's run of failures. */
export async function endpointSucceeded(db: Db, id: string): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', id).execute()
}

/**
 * Records a failure: starts the run of failures if none is under way, and disables the endpoint
 * when that run began before `failingBefore`. Whether it disabled it.
 */
export async function endpointFailed(
  db: Db,
  id: string,
  options: { now: string; failingBefore: string; reason: string; updatedAt: string },
): Promise<boolean> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: options.now })
    .where('id', '=', id)
    .where('failing_since', 'is', null)
    .execute()
  const disabled = await db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: options.reason, updated_at: options.updatedAt })
    .where('id', '=', id)
    .where('status', '=', 'enabled')
    .where('failing_since', '<=', options.failingBefore)
    .executeTakeFirst()
  return disabled.numUpdatedRows > 0n
}

/** Every delivery of the account's endpoints (their attempts go with them: the foreign key cascades). */
export async function deleteAllDeliveriesOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).execute()
}
