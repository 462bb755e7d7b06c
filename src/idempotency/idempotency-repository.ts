import { type InsertResult, sql } from 'kysely'
import { prepareQuery } from '../db/prepared-query.ts'
import type { Db } from '../db/schema.ts'
import { type KeyClaim, takeOverStale } from './key-claim-statement.ts'

/** The SQL of the idempotency_keys table; the rules are in idempotency.ts. */

/**
 * Inserts the key as running, or takes over an expired one (or a pre-2026-11-23 claim whose
 * lease passed); true when this transaction now holds it. With `lockTimeoutMs`, waiting for a
 * concurrent holder fails with PostgreSQL's lock_not_available (55P03) after that long.
 */
export async function claimKey(trx: Db, claim: KeyClaim): Promise<boolean> {
  // Bound the wait for a concurrent holder of the key to this statement alone, then put back the
  // transaction's own bound: behind a connection pooler that is a `set local` of its own, which
  // `to default` would drop for the role's setting (src/db/postgres-pool.ts).
  const before =
    claim.lockTimeoutMs === undefined
      ? undefined
      : (
          await sql<{ setting: string }>`with before as materialized (
              select current_setting('lock_timeout') as setting)
            select setting, set_config('lock_timeout', ${String(Math.trunc(claim.lockTimeoutMs))}, true)
              from before`.execute(trx)
        ).rows[0]?.setting
  const taken = await claimKeyQuery.executeWrite(trx, {
    account_id: claim.accountId,
    key: claim.key,
    request_hash: claim.fingerprint,
    at: claim.at,
    expired_before: claim.expiredBefore,
  })
  if (before !== undefined) await sql`select set_config('lock_timeout', ${before}, true)`.execute(trx)
  return taken > 0
}

type ClaimArgs = { account_id: string; key: string; request_hash: string; at: string; expired_before: string }

/**
 * The claim's insert, built once (src/db/prepared-query.ts): it runs with every keyed create. The
 * row count says whether it claimed (inserted, or took over a stale claim): no RETURNING, which
 * SQLite runs through a temporary table.
 */
const claimKeyQuery = prepareQuery<ClaimArgs, InsertResult>((db, p) => {
  const running = {
    request_hash: p('request_hash'),
    state: 'running' as const,
    response_status: null,
    response_headers: null,
    response_body: null,
    created_at: p('at'),
    locked_until: p('at'),
  }
  return db
    .insertInto('idempotency_keys')
    .values({ account_id: p('account_id'), key: p('key'), ...running })
    .onConflict((oc) => takeOverStale(oc, running, p('expired_before'), p('at')))
})

export async function findKey(trx: Db, accountId: string, key: string) {
  return trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst()
}

type StoreArgs = { account_id: string; key: string; status: number; headers: string; body: string }

const storeResponseQuery = prepareQuery<StoreArgs, unknown>((db, p) =>
  db
    .updateTable('idempotency_keys')
    .set({
      state: 'done',
      response_status: p('status'),
      response_headers: p('headers'),
      response_body: p('body'),
    })
    .where('account_id', '=', p('account_id'))
    .where('key', '=', p('key')),
)

/** Marks the key done with the response to replay. */
export async function storeResponse(
  trx: Db,
  accountId: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: unknown },
): Promise<void> {
  await storeResponseQuery.execute(trx, {
    account_id: accountId,
    key,
    status: response.status,
    headers: JSON.stringify(response.headers),
    body: JSON.stringify(response.body),
  })
}

export async function deleteKeysCreatedBefore(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}

export async function deleteAllKeysOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).execute()
}
