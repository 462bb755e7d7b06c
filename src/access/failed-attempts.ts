import { ApiError } from '../errors/api-error.ts'
import type { RateLimiter } from '../http/rate-limiter.ts'

/**
 * Counts a failed authentication (a 401) against the client's address, v1 and v2 alike: past the
 * allowance the answer becomes 429, so guessing credentials is refused before any more lookups.
 * Returns the error to throw: the 429, or `error` unchanged.
 */
export async function countFailedAttempt(
  failedAttempts: RateLimiter | undefined,
  address: string,
  error: unknown,
): Promise<unknown> {
  if (failedAttempts === undefined || !(error instanceof ApiError) || error.status !== 401) return error
  const retryAfter = await pastTheAllowance(failedAttempts, address)
  if (retryAfter === undefined) return error
  return new ApiError('rate_limited', tooManyFailures(retryAfter), {
    headers: { 'retry-after': String(retryAfter) },
  })
}

/**
 * Counts one failed authentication against `address`; answers the seconds to wait when it was
 * past the allowance (the answer should then be a 429), undefined otherwise. For answers that are
 * not problem documents (the OAuth token endpoint's, src/routes/oauth/failed-clients.ts).
 */
export async function pastTheAllowance(
  failedAttempts: RateLimiter,
  address: string,
): Promise<number | undefined> {
  const decision = await failedAttempts.take(address)
  return decision.allowed ? undefined : decision.retryAfterSeconds
}

/** What a refused attempt past the allowance is told. */
export function tooManyFailures(retryAfterSeconds: number): string {
  return `Too many failed authentication attempts from your address; retry in ${retryAfterSeconds} s.`
}
