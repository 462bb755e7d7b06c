import type { Kysely } from 'kysely'
import { runAtomicWrite } from '../db/atomic-write.ts'
import { isPostgres } from '../db/dialect.ts'
import type { Database, Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { redactSecret } from '../errors/redact.ts'
import { sha256Hex } from '../lib/hash.ts'
import { canonicalJson } from '../lib/json.ts'
import { nowIso } from '../lib/time.ts'
import { claimKey, deleteKeysCreatedBefore, findKey, storeResponse } from './idempotency-repository.ts'

/** How long a completed response is kept for replay (README, Idempotent retries). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

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
 * How long a request waits for another one with the same key that is still running (its
 * transaction holds the key's row) before it answers 409. PostgreSQL only: SQLite runs one
 * write transaction at a time, so there the second request simply goes after the first.
 */
const IN_PROGRESS_WAIT_MS = 2_000

/**
 * Runs `work` at most once per (account, Idempotency-Key), in one transaction that also claims
 * the key and stores the response. Nothing about a request outlives its transaction: if the
 * request fails, or its process dies (kill -9), the claim rolls back with the work, and a retry
 * with the same key runs it afresh at once. A second request with the key while the first is
 * running waits for the first's transaction to end (on PostgreSQL, the unique key's row lock;
 * on SQLite, the single writer) and then replays its response; after IN_PROGRESS_WAIT_MS it
 * answers 409, so a 409 means the first request is really still running.
 *
 * Without a key, `work` runs in a transaction of its own, unless `atomicOnPostgres` says that on
 * PostgreSQL it is atomic without one (every statement it sends is a whole change that may be
 * committed alone, such as createPet's one-statement insert): there it runs on `db` itself.
 */
export async function runIdempotent(
  db: Kysely<Database>,
  request: { accountId: string; key: string | undefined; fingerprint: string },
  work: (trx: Db) => Promise<StoredResponse>,
  options: { atomicOnPostgres?: boolean } = {},
): Promise<IdempotentResult> {
  const { accountId, key, fingerprint } = request
  const postgres = isPostgres(db)
  if (key === undefined) {
    const response =
      options.atomicOnPostgres === true
        ? await runAtomicWrite(db, work)
        : await db.transaction().execute(work)
    return { ...response, replayed: false }
  }
  return db.transaction().execute(async (trx) => {
    const replay = await claim(trx, postgres, accountId, key, fingerprint)
    if (replay !== undefined) return { ...replay, replayed: true }
    const response = await work(trx)
    await storeResponse(trx, accountId, key, response)
    return { ...response, replayed: false }
  })
}

function inProgress(key: string): ApiError {
  return new ApiError(
    'idempotency_request_in_progress',
    `A request with Idempotency-Key ${redactSecret(key)} is still running; retry in a moment.`,
    { param: 'Idempotency-Key', headers: { 'retry-after': '1' } },
  )
}

/** PostgreSQL's lock_not_available: lock_timeout passed while waiting. */
function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '55P03'
}

/**
 * Takes the key inside the request's transaction, or answers what an earlier request with it
 * left. An expired response, or a claim committed by a version of the service before
 * 2026-11-23 whose `locked_until` has passed, is taken over.
 */
async function claim(
  trx: Db,
  postgres: boolean,
  accountId: string,
  key: string,
  fingerprint: string,
): Promise<StoredResponse | undefined> {
  const now = Date.now()
  let taken: boolean
  try {
    taken = await claimKey(trx, {
      accountId,
      key,
      fingerprint,
      at: nowIso(now),
      expiredBefore: nowIso(now - IDEMPOTENCY_TTL_MS),
      lockTimeoutMs: postgres ? IN_PROGRESS_WAIT_MS : undefined,
    })
  } catch (error) {
    if (isLockTimeout(error)) throw inProgress(key)
    throw error
  }
  if (taken) return undefined

  const existing = await findKey(trx, accountId, key)
  // Gone between the two statements (purged): the client's retry will claim it.
  if (existing === undefined) throw inProgress(key)
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
  // A claim committed by an earlier version of the service that is still within its lease.
  throw inProgress(key)
}

/** Deletes stored responses older than the replay window. */
export async function purgeExpiredIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  return deleteKeysCreatedBefore(db, nowIso(now - IDEMPOTENCY_TTL_MS))
}
