import { type OnConflictBuilder, type RawBuilder, sql } from 'kysely'
import type { Placeholder } from '../db/prepared-query.ts'
import type { Database, Db, IdempotencyKeysTable } from '../db/schema.ts'

/**
 * The claim of an Idempotency-Key as part of another statement: the idempotency_keys SQL that a
 * feature's one-statement change on PostgreSQL embeds (the pets repository's keyed create), as
 * that repository embeds the event's insert. The rules are in idempotency.ts; the transactional
 * claim is in idempotency-repository.ts, which shares the takeover rule below.
 */

/** A claim of an Idempotency-Key, in a transaction (claimKey) or in a change's statement. */
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
 * The ON CONFLICT of every claim: a key whose stored response has expired, or a claim committed
 * by a version of the service before 2026-11-23 whose lease passed, is taken over with `values`;
 * any other holder keeps the key, and the claim inserts nothing.
 */
export function takeOverStale(
  oc: OnConflictBuilder<Database, 'idempotency_keys'>,
  values: Omit<IdempotencyKeysTable, 'account_id' | 'key'>,
  expiredBefore: string,
  at: string,
) {
  return oc
    .columns(['account_id', 'key'])
    .doUpdateSet(values)
    .where(
      sql<boolean>`idempotency_keys.created_at <= ${expiredBefore}
        or (idempotency_keys.state = 'running' and idempotency_keys.locked_until <= ${at})`,
    )
}

/** The parameters of a key claimed by a change's own statement (withKeyClaimed). */
export interface KeyClaimArgs {
  key_account_id: string
  key: string
  key_request_hash: string
  key_response_status: number
  key_response_headers: string
  key_response_body: string
  key_at: string
  key_expired_before: string
  /** lock_timeout for the claim alone, as PostgreSQL reads a setting: milliseconds, as text. */
  key_lock_timeout: string
}

export function keyClaimArgs(
  claim: KeyClaim & { lockTimeoutMs: number },
  response: { status: number; headers: Record<string, string>; body: unknown },
): KeyClaimArgs {
  return {
    key_account_id: claim.accountId,
    key: claim.key,
    key_request_hash: claim.fingerprint,
    key_response_status: response.status,
    key_response_headers: JSON.stringify(response.headers),
    key_response_body: JSON.stringify(response.body),
    key_at: claim.at,
    key_expired_before: claim.expiredBefore,
    key_lock_timeout: String(Math.trunc(claim.lockTimeoutMs)),
  }
}

/**
 * PostgreSQL only: the start of a change's one statement that claims its Idempotency-Key and
 * stores, in the same write, the response the change will answer (built before it, as its
 * event is). The CTE `key_claim` answers one row whose `account_id` is null unless the key was
 * claimed; the change's own sub-statements select from it where it is not null, so when the key
 * was not claimed (an earlier request holds it, or `onlyIf` is false) the statement changes
 * nothing, and the caller runs the transactional claim (idempotency.ts) to learn why. If any
 * later part of the statement fails, the claim is undone with it: the statement is atomic.
 *
 * The wait for a concurrent holder of the key is bounded as the transactional claim's is:
 * set_config(…, true) sets lock_timeout until the end of the transaction (this statement, sent
 * outside one), and `key_claim` puts the previous value back before the change's own writes,
 * which wait as long as they would without a key. Each step reads the one before it, which
 * orders them: the setting, the claim, the restored setting, the change.
 */
export function withKeyClaimed<Args extends KeyClaimArgs>(
  db: Db,
  p: Placeholder<Args>,
  onlyIf: RawBuilder<boolean>,
) {
  const done = {
    request_hash: p('key_request_hash'),
    state: 'done' as const,
    response_status: p('key_response_status'),
    response_headers: p('key_response_headers'),
    response_body: p('key_response_body'),
    created_at: p('key_at'),
    locked_until: p('key_at'),
  }
  return db
    .with(
      'key_lock_timeout_before',
      () => sql<{ setting: string }>`(select current_setting('lock_timeout') as setting)`,
    )
    .with(
      'key_wait_bounded',
      () =>
        sql<{ bounded: string }>`(select set_config('lock_timeout', ${p('key_lock_timeout')}, true) as bounded
          from key_lock_timeout_before)`,
    )
    .with('claimed_key', (qc) =>
      qc
        .insertInto('idempotency_keys')
        .columns(['account_id', 'key', ...(Object.keys(done) as (keyof typeof done)[])])
        .expression(
          qc
            .selectFrom('key_wait_bounded')
            .select([
              sql.val(p('key_account_id')).as('account_id'),
              sql.val(p('key')).as('key'),
              ...Object.entries(done).map(([column, value]) => sql.val(value).as(column)),
            ])
            .where(onlyIf),
        )
        .onConflict((oc) => takeOverStale(oc, done, p('key_expired_before'), p('key_at')))
        .returning('account_id'),
    )
    .with(
      'key_claim',
      () =>
        sql<{
          account_id: string | null
        }>`(select set_config('lock_timeout', key_lock_timeout_before.setting, true) as restored,
          claimed_key.account_id
          from key_lock_timeout_before left join claimed_key on true)`,
    )
}
