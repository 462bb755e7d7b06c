/**
 * When a failed delivery is tried again: exponential backoff from 30 s, ×4 per attempt, capped
 * at 12 h, each delay drawn within ±25 % (jitter, so the deliveries that failed together do not
 * all come back together), for at most 3 days after the first attempt; then the delivery is
 * `failed`. The README's Webhooks section shows the table.
 */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000
const FIRST_DELAY_MS = 30_000
const FACTOR = 4
const MAX_DELAY_MS = 12 * 60 * 60 * 1000
const JITTER = 0.25

/** The delay before attempt `failedAttempts + 1`, without jitter. */
export function baseDelayMs(failedAttempts: number): number {
  return Math.min(FIRST_DELAY_MS * FACTOR ** (failedAttempts - 1), MAX_DELAY_MS)
}

/**
 * The time of the next attempt after `failedAttempts` failures, or null when it would fall past
 * the retry window that started at `firstAttemptAt`. `random` in [0, 1) picks the jitter.
 */
export function nextAttemptAt(
  failedAttempts: number,
  firstAttemptAt: number,
  now: number,
  random: () => number = Math.random,
): number | null {
  const delay = baseDelayMs(failedAttempts) * (1 - JITTER + 2 * JITTER * random())
  const next = now + Math.round(delay)
  return next - firstAttemptAt > RETRY_WINDOW_MS ? null : next
}
