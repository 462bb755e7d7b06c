import { sql } from 'kysely'
import type { Db } from '../db/schema.ts'

/** The SQL of the idempotency_keys table; the rules are in idempotency.ts. */

export interface KeyClaim {
  accountId: string
  key: string
  fingerprint: string
  at: string
  /** A stored response created at or before this is expired and taken over. */
  expiredBefore: string
  /** PostgreSQL: how long to wait for a concurrent holder of the key's row. */
  lockTimeoutMs: number | undefined
}

/**
 * Inserts the key as running, or takes over an expired one (or a pre-2026-11-23 claim whose
 * lease passed); true when this transaction now holds it. With `lockTimeoutMs`, waiting for a
 * concurrent holder fails with PostgreSQL's lock_not_available (55P03) after that long.
 */
export async function claimKey(trx: Db, claim: KeyClaim): Promise<boolean> {
  const claimed = {
    request_hash: claim.fingerprint,
    state: 'running' as const,
    response_status: null,
    response_headers: null,
    response_body: null,
    created_at: claim.at,
    locked_until: claim.at,
  }
  // Bound the wait for a concurrent holder of the key to this statement alone.
  if (claim.lockTimeoutMs !== undefined) {
    await sql.raw(`set local lock_timeout = ${Math.trunc(claim.lockTimeoutMs)}`).execute(trx)
  }
  const taken = await trx
    .insertInto('idempotency_keys')
    .values({ account_id: claim.accountId, key: claim.key, ...claimed })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'key'])
        .doUpdateSet(claimed)
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<=', claim.expiredBefore),
            eb.and([
              eb('idempotency_keys.state', '=', 'running'),
              eb('idempotency_keys.locked_until', '<=', claim.at),
            ]),
          ]),
        ),
    )
    .executeTakeFirst()
  if (claim.lockTimeoutMs !== undefined) await sql`set local lock_timeout to default`.execute(trx)
  return (taken.numInsertedOrUpdatedRows ?? 0n) > 0n
}

export async function findKey(trx: Db, accountId: string, key: string) {
  return trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst()
}

/** Marks the key done with the response to replay. */
export async function storeResponse(
  trx: Db,
  accountId: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: unknown },
): Promise<void> {
  await trx
    .updateTable('idempotency_keys')
    .set({
      state: 'done',
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: JSON.stringify(response.body),
    })
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .execute()
}

export async function deleteKeysCreatedBefore(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
