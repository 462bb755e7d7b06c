import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import type { RateLimiter } from './rate-limiter.ts'

/**
 * Per-account limit, applied after authentication. Every response says where the caller stands,
 * in the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers).
 */
export function accountRateLimit(limiter: RateLimiter) {
  const windowSeconds = Math.max(1, Math.ceil(limiter.burst / limiter.ratePerSecond))
  const policy = `"account";q=${limiter.burst};w=${windowSeconds}`
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = request.principal
    if (principal === null) return
    const decision = await limiter.take(principal.accountId)
    reply.header('ratelimit-policy', policy)
    reply.header('ratelimit', `"account";r=${decision.remaining};t=${decision.resetSeconds}`)
    if (!decision.allowed) {
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${limiter.ratePerSecond} requests per second (bursts of ${limiter.burst}) exceeded; retry in ${decision.retryAfterSeconds} s.`,
        { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
      )
    }
  }
}
