import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import type { KeyAuthenticator } from '../../keys/keys-service.ts'
import { v1AccountRoutes } from './account.ts'
import { apiKeyAuthentication } from './authentication.ts'
import { v1EventRoutes } from './events.ts'
import { v1OrderRoutes } from './orders.ts'
import { v1PetRoutes } from './pets.ts'
import { v1RequestLogRoutes } from './request-logs.ts'
import { v1UserRoutes } from './users.ts'
import { v1WebhookEndpointRoutes } from './webhook-endpoints.ts'

export interface V1ApiOptions {
  keys: KeyAuthenticator
  /** Failed authentications per client address (shared with v2). */
  failedAttempts: RateLimiter
  /** The per-account rate limit hook, when rate limiting is on. */
  rateLimit?: onRequestAsyncHookHandler
}

/**
 * The v1 API, mounted at /v1 by app.ts (no route depends on where): API keys, form fields or
 * JSON, over the same domain services as v2.
 */
export async function v1Api(v1: FastifyInstance, options: V1ApiOptions): Promise<void> {
  v1.addHook(
    'onRequest',
    apiKeyAuthentication({ keys: options.keys, failedAttempts: options.failedAttempts }),
  )
  if (options.rateLimit !== undefined) v1.addHook('onRequest', options.rateLimit)
  await v1.register(v1PetRoutes)
  await v1.register(v1UserRoutes)
  await v1.register(v1OrderRoutes)
  await v1.register(v1EventRoutes)
  await v1.register(v1WebhookEndpointRoutes)
  await v1.register(v1RequestLogRoutes)
  await v1.register(v1AccountRoutes)
}
