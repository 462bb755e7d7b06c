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
  const decision = await failedAttempts.take(address)
  if (decision.allowed) return error
  return new ApiError(
    'rate_limited',
    `Too many failed authentication attempts from your address; retry in ${decision.retryAfterSeconds} s.`,
    { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
  )
}
