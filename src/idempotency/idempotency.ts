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
import { type KeyClaimArgs, keyClaimArgs } from './key-claim-statement.ts'

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
 * The transactional claim's wait after a one-statement create already waited IN_PROGRESS_WAIT_MS
 * for a lock (runIdempotentCreate): enough to find the key still held, without doubling the wait.
 */
const RECHECK_WAIT_MS = 100

/**
 * Runs `work` at most once per (account, Idempotency-Key), in one transaction that also claims
 * the key and stores the response. Nothing about a request outlives its transaction: if the
 * request fails, or its process dies (kill -9), the claim rolls back with the work, and a retry
 * with the same key runs it afresh at once. A second request with the key while the first is
 * running waits for the first's transaction to end (on PostgreSQL, the unique key's row lock;
 * on SQLite, the single writer) and then replays its response; after IN_PROGRESS_WAIT_MS it
 * answers 409, so a 409 means the first request is really still running.
 */
export async function runIdempotent(
  db: Kysely<Database>,
  request: IdempotentRequest,
  work: (trx: Db) => Promise<StoredResponse>,
  claimWaitMs = IN_PROGRESS_WAIT_MS,
): Promise<IdempotentResult> {
  const { accountId, key, fingerprint } = request
  if (key === undefined) return { ...(await db.transaction().execute(work)), replayed: false }
  const waitMs = isPostgres(db) ? claimWaitMs : undefined
  return db.transaction().execute(async (trx) => {
    const replay = await claim(trx, waitMs, accountId, key, fingerprint)
    if (replay !== undefined) return { ...replay, replayed: true }
    const response = await work(trx)
    await storeResponse(trx, accountId, key, response)
    return { ...response, replayed: false }
  })
}

export interface IdempotentRequest {
  accountId: string
  key: string | undefined
  fingerprint: string
}

/** An Idempotency-Key for a create to claim in its own statement (PostgreSQL). */
export interface KeyToClaim<T> {
  /** The key's parameters in the create's statement, with the response to `created` to store. */
  argsFor(created: T): KeyClaimArgs
}

/**
 * A create that is one statement on PostgreSQL (a pet and its event, createPet): atomic on its
 * own there, so it needs no transaction, and it can claim an Idempotency-Key in that statement.
 */
export interface AtomicCreate<T> {
  create(db: Db): Promise<T>
  /** The create, claiming `key` in its statement; undefined when it did not (nothing written). */
  createClaiming(db: Db, key: KeyToClaim<T>): Promise<T | undefined>
  respond(created: T): StoredResponse
}

/**
 * runIdempotent for an AtomicCreate. On PostgreSQL the create runs without a transaction, and
 * with a key it claims the key and stores its response in its own one statement: one round trip
 * instead of the transaction's seven (BEGIN, lock_timeout set and reset, the claim, the create,
 * the response, COMMIT), with the same promises: a statement is atomic, and its claim's wait is
 * bounded as the transaction's is. When that statement claims nothing (a retry, a key reused with
 * other parameters, a missing owner: it wrote nothing), the transactional path runs and answers
 * as it always has. So it does when the statement gave up waiting for a lock, which may be the
 * key's (held by a request still running) or another (a table locked by maintenance): the
 * transactional claim tells which, waiting only briefly since the wait has been had, and answers
 * 409 or goes on. SQLite runs the transactional path, in its group commit.
 *
 * A process killed while its statement runs cannot stop it: PostgreSQL finishes and commits it,
 * and a retry with the key replays its response (README, Idempotent retries).
 */
export async function runIdempotentCreate<T>(
  db: Kysely<Database>,
  request: IdempotentRequest,
  creation: AtomicCreate<T>,
): Promise<IdempotentResult> {
  const transactional = (claimWaitMs?: number) =>
    runIdempotent(db, request, async (trx) => creation.respond(await creation.create(trx)), claimWaitMs)
  if (!isPostgres(db)) return transactional()
  const { key } = request
  if (key === undefined) {
    return { ...creation.respond(await runAtomicWrite(db, (c) => creation.create(c))), replayed: false }
  }
  // Object.assign, not spreads: see prepareQuery (src/db/prepared-query.ts).
  const claim = Object.assign({}, request, { key, lockTimeoutMs: IN_PROGRESS_WAIT_MS }, claimTimes())
  // The response stored with the key is the one answered, so a replay matches it byte for byte.
  let stored: StoredResponse | undefined
  const argsFor = (created: T) => {
    stored = creation.respond(created)
    return keyClaimArgs(claim, stored)
  }
  let created: T | undefined
  try {
    created = await runAtomicWrite(db, (c) => creation.createClaiming(c, { argsFor }))
  } catch (error) {
    if (isLockTimeout(error)) return transactional(RECHECK_WAIT_MS)
    throw error
  }
  if (created === undefined || stored === undefined) return transactional()
  return { ...stored, replayed: false }
}

/** A claim's time, and the time before which a stored response has expired and is taken over. */
function claimTimes(now = Date.now()): { at: string; expiredBefore: string } {
  return { at: nowIso(now), expiredBefore: nowIso(now - IDEMPOTENCY_TTL_MS) }
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
  lockTimeoutMs: number | undefined,
  accountId: string,
  key: string,
  fingerprint: string,
): Promise<StoredResponse | undefined> {
  let taken: boolean
  try {
    // Object.assign, not a spread: see prepareQuery (src/db/prepared-query.ts).
    taken = await claimKey(trx, Object.assign({ accountId, key, fingerprint, lockTimeoutMs }, claimTimes()))
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

/** For a sandbox's reset: the stored answers of its creates. */
export { deleteAllKeysOfAccount as deleteAllIdempotencyKeysOfAccount } from './idempotency-repository.ts'
