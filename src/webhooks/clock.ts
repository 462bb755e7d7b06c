/**
 * The time as the webhooks worker sees it, injected so that tests run the retry schedule
 * (minutes to days) without waiting: `now` in milliseconds, `sleep` resolved early by close().
 */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }
