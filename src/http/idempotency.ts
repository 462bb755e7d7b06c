import type { Kysely } from 'kysely'
import type { Database, Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { sha256Hex } from '../lib/hash.ts'
import { canonicalJson } from '../lib/json.ts'
import { redactSecret } from '../lib/redact.ts'
import { nowIso } from '../lib/time.ts'

/** How long a completed response is kept for replay (PRODUCT.md §6). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** How long a running request holds its key; after that (a crash) a retry may take it over. */
const CLAIM_MS = 60_000

export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

export interface IdempotentResult extends StoredResponse {
  replayed: boolean
}

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/

export function validateIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  if (Array.isArray(value) || !KEY_SHAPE.test(value)) {
    throw new ApiError(
      'parameter_invalid',
      'Idempotency-Key must be one value of 1 to 255 visible ASCII characters, such as a UUID.',
      { param: 'Idempotency-Key' },
    )
  }
  return value
}

export function requestFingerprint(method: string, path: string, params: unknown): string {
  return sha256Hex(`${method} ${path} ${canonicalJson(params ?? {})}`)
}

/**
 * Runs `work` in a transaction, at most once per (account, Idempotency-Key). The response is
 * stored in that same transaction, so a crash can never leave a change without its stored
 * response (or the reverse). A request that fails changes nothing, so its key is released and
 * may be retried.
 */
export async function runIdempotent(
  db: Kysely<Database>,
  request: { accountId: string; key: string | undefined; fingerprint: string },
  work: (trx: Db) => Promise<StoredResponse>,
): Promise<IdempotentResult> {
  const { accountId, key, fingerprint } = request
  if (key === undefined) return { ...(await db.transaction().execute(work)), replayed: false }

  const replay = await claim(db, accountId, key, fingerprint)
  if (replay !== undefined) return { ...replay, replayed: true }
  try {
    const result = await db.transaction().execute(async (trx) => {
      const response = await work(trx)
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
      return response
    })
    return { ...result, replayed: false }
  } catch (error) {
    await db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute()
    throw error
  }
}

/** Takes the key for this request, or answers what an earlier request with it left. */
async function claim(
  db: Kysely<Database>,
  accountId: string,
  key: string,
  fingerprint: string,
): Promise<StoredResponse | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = Date.now()
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        account_id: accountId,
        key,
        request_hash: fingerprint,
        state: 'running',
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: nowIso(now),
        locked_until: nowIso(now + CLAIM_MS),
      })
      .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
      .executeTakeFirst()
    if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return undefined

    const existing = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst()
    if (existing === undefined) continue
    if (Date.parse(existing.created_at) + IDEMPOTENCY_TTL_MS <= now) {
      // Expired: forget it and claim afresh.
      await db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .where('created_at', '=', existing.created_at)
        .execute()
      continue
    }
    if (existing.request_hash !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        `Idempotency-Key ${redactSecret(key)} was already used with different parameters; send a new key for a new request.`,
        { param: 'Idempotency-Key' },
      )
    }
    if (existing.state === 'done') {
      return {
        status: existing.response_status ?? 200,
        headers: JSON.parse(existing.response_headers ?? '{}') as Record<string, string>,
        body: JSON.parse(existing.response_body ?? 'null') as unknown,
      }
    }
    if (Date.parse(existing.locked_until) > now) {
      throw new ApiError(
        'idempotency_request_in_progress',
        `A request with Idempotency-Key ${redactSecret(key)} is still running; retry in a moment.`,
        { param: 'Idempotency-Key', headers: { 'retry-after': '1' } },
      )
    }
    // The earlier attempt died mid-way (its transaction rolled back): take its claim over.
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ locked_until: nowIso(now + CLAIM_MS), created_at: nowIso(now) })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('locked_until', '=', existing.locked_until)
      .executeTakeFirst()
    if (taken.numUpdatedRows > 0n) return undefined
  }
  throw new ApiError(
    'idempotency_request_in_progress',
    `Idempotency-Key ${redactSecret(key)} is contended; retry.`,
    {
      param: 'Idempotency-Key',
    },
  )
}

/** Deletes stored responses older than the replay window. */
export async function purgeExpiredIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', nowIso(now - IDEMPOTENCY_TTL_MS))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
