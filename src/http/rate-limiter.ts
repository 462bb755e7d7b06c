import type { SharedRedis } from './shared-redis.ts'

/**
 * Token-bucket rate limiting by the generic cell rate algorithm (GCRA): each key stores one
 * number, the "theoretical arrival time" of its next request. A key may send `burst` requests
 * at once and `ratePerSecond` sustained.
 */
export interface RateLimitDecision {
  allowed: boolean
  /** Requests still allowed right now. */
  remaining: number
  /** Seconds until the bucket is full again. */
  resetSeconds: number
  /** Seconds to wait before retrying, when refused. */
  retryAfterSeconds: number
}

export interface RateLimiter {
  readonly ratePerSecond: number
  readonly burst: number
  take(key: string): Promise<RateLimitDecision>
  close(): Promise<void>
}

interface Gcra {
  intervalMs: number
  toleranceMs: number
}

function gcra(ratePerSecond: number, burst: number): Gcra {
  const intervalMs = 1000 / ratePerSecond
  return { intervalMs, toleranceMs: intervalMs * burst }
}

function decide(
  g: Gcra,
  burst: number,
  tat: number,
  now: number,
): { decision: RateLimitDecision; newTat: number } {
  const newTat = Math.max(tat, now) + g.intervalMs
  const allowed = newTat - now <= g.toleranceMs
  const effectiveTat = allowed ? newTat : Math.max(tat, now)
  const remaining = Math.max(
    0,
    Math.min(burst, Math.floor((g.toleranceMs - (effectiveTat - now)) / g.intervalMs)),
  )
  return {
    newTat: effectiveTat,
    decision: {
      allowed,
      remaining,
      resetSeconds: Math.max(0, Math.ceil((effectiveTat - now) / 1000)),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((newTat - g.toleranceMs - now) / 1000)),
    },
  }
}

/** One process's limiter; enough for a single instance. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #tats = new Map<string, number>()
  readonly #gcra: Gcra
  #sweepAt = 0

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#gcra = gcra(ratePerSecond, burst)
  }

  async take(key: string): Promise<RateLimitDecision> {
    const now = this.now()
    this.#sweep(now)
    const { decision, newTat } = decide(this.#gcra, this.burst, this.#tats.get(key) ?? now, now)
    this.#tats.set(key, newTat)
    return decision
  }

  /** Forgets keys whose buckets are full again, so memory tracks active clients only. */
  #sweep(now: number): void {
    if (now < this.#sweepAt) return
    this.#sweepAt = now + 10_000
    for (const [key, tat] of this.#tats) if (tat <= now) this.#tats.delete(key)
  }

  async close(): Promise<void> {}
}

// The same algorithm as decide(), run atomically inside Redis with Redis's clock, so that every
// instance shares one bucket per key.
const GCRA_LUA = `
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
if new_tat - now <= tolerance then
  redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
  return {1, tostring(new_tat - now), tostring(now)}
end
return {0, tostring(tat - now), tostring(now)}
`

/**
 * A rate limit shared by every instance through Redis, that degrades instead of failing: while
 * Redis does not answer (refused, cut, stalled past its timeout), each instance limits with its
 * own memory, at the same rates, and goes back to Redis as soon as it answers again.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #gcra: Gcra
  readonly #fallback: MemoryRateLimiter

  constructor(
    private readonly redis: SharedRedis,
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly prefix = 'pet-service:rl:',
  ) {
    this.#gcra = gcra(ratePerSecond, burst)
    this.#fallback = new MemoryRateLimiter(ratePerSecond, burst)
  }

  async take(key: string): Promise<RateLimitDecision> {
    if (!this.redis.answering) {
      this.redis.fellBack()
      return this.#fallback.take(key)
    }
    let reply: [number, string, string]
    try {
      reply = (await this.redis.client.eval(
        GCRA_LUA,
        1,
        this.prefix + key,
        String(this.#gcra.intervalMs),
        String(this.#gcra.toleranceMs),
      )) as [number, string, string]
    } catch (error) {
      this.redis.failed(error)
      this.redis.fellBack()
      return this.#fallback.take(key)
    }
    const [allowed, aheadText] = reply
    const ahead = Number(aheadText)
    const { intervalMs, toleranceMs } = this.#gcra
    return {
      allowed: allowed === 1,
      remaining: Math.max(0, Math.min(this.burst, Math.floor((toleranceMs - ahead) / intervalMs))),
      resetSeconds: Math.max(0, Math.ceil(ahead / 1000)),
      retryAfterSeconds:
        allowed === 1 ? 0 : Math.max(1, Math.ceil((ahead + intervalMs - toleranceMs) / 1000)),
    }
  }

  async close(): Promise<void> {
    this.redis.close()
  }
}
