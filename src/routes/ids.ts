import { isInteger, LosslessNumber, parse as losslessParse } from 'lossless-json'
import { MAX_ID } from '../db/account-ids.ts'
import { ApiError } from '../errors/api-error.ts'

/**
 * The one id rule of the API, for pets and users, in paths and in JSON bodies: an id is an
 * integer written in digits (an optional minus), within the signed int64 range the Petstore
 * declares (`format: int64`); anything else is 400 "Invalid ID supplied". An id is never rounded.
 *
 * Ids are per account, from 1 to 2^53 − 1 (MAX_ID: every JSON client reads such an id exactly),
 * whether the service assigns them or a client chooses one (`POST /v2/pet` with an `id`). So a
 * lookup of any other valid int64 names nothing (404), and a new record with one is refused
 * (400, naming the range).
 */
const INT64_MAX = 2n ** 63n - 1n
const INT64_MIN = -(2n ** 63n)
/** Digits beyond these name no int64 anyway; the cap keeps BigInt work small. */
const ID_TEXT = /^-?\d{1,30}$/

/** The Petstore's 400 "Invalid ID supplied". */
export function invalidId(param: string): ApiError {
  return new ApiError('invalid_id', `Invalid ID supplied: ${param} must be an integer within int64.`, {
    param,
  })
}

/**
 * An id as sent: path text, a JSON number, or the exact digits of a JSON integer past 2^53 (a
 * bigint, see exactIntegerOf). Throws `invalidId(param)` or `notFound(digits)`.
 */
export function parseId(value: unknown, param: string, notFound: (id: string) => ApiError): number {
  let exact: bigint
  if (typeof value === 'bigint') exact = value
  else if (typeof value === 'number' && Number.isSafeInteger(value)) exact = BigInt(value)
  else if (typeof value === 'string' && ID_TEXT.test(value)) exact = BigInt(value)
  else throw invalidId(param)
  if (exact > INT64_MAX || exact < INT64_MIN) throw invalidId(param)
  if (exact < 1n || exact > BigInt(Number.MAX_SAFE_INTEGER)) throw notFound(exact.toString())
  return Number(exact)
}

/**
 * An id a client chooses for a new record (a JSON number, or the exact digits of one past 2^53):
 * 1 to 2^53 − 1, else 400 "Invalid ID supplied" naming the range.
 */
export function parseNewId(value: unknown, param: string): number {
  if ((typeof value === 'number' && Number.isSafeInteger(value)) || typeof value === 'bigint') {
    const id = Number(value)
    if (BigInt(value) >= 1n && BigInt(value) <= BigInt(MAX_ID)) return id
  }
  throw new ApiError(
    'invalid_id',
    `Invalid ID supplied: ${param} must be an integer from 1 to ${MAX_ID} (2^53 − 1).`,
    { param },
  )
}

/**
 * The exact value of a JSON body's top-level integer `id` past 2^53, which JSON.parse can only
 * round. The JSON content-type parser (index.ts) fills it once, from the text it parses; the
 * routes read it with exactIdOf. Keyed by the parsed body, so it goes with it.
 */
const exactIds = new WeakMap<object, bigint>()

/** Reads the exact digits of `body.id` from `text` when the parsed number could have lost some. */
export function rememberExactId(body: unknown, text: string): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return
  const id = (body as { id?: unknown }).id
  if (typeof id !== 'number' || !Number.isInteger(id) || Number.isSafeInteger(id)) return
  let exact: unknown
  try {
    exact = (losslessParse(text) as { id?: unknown } | null)?.id
  } catch {
    // Nested too deep for a recursive parser: the id stays rounded, so it is refused (400).
    return
  }
  if (exact instanceof LosslessNumber && isInteger(exact.value)) exactIds.set(body, BigInt(exact.value))
}

/** `body.id` as sent: its exact digits when it is an integer past 2^53, else the parsed value. */
export function exactIdOf(body: { id?: unknown }): unknown {
  return exactIds.get(body) ?? body.id
}
