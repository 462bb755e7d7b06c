import { readFileSync } from 'node:fs'
import formbody from '@fastify/formbody'
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify'
import { Redis } from 'ioredis'
import type { Kysely } from 'kysely'
import { apiKeyAuthentication } from './auth/api-key-auth.ts'
import type { Config } from './config/config.ts'
import { dashboard } from './dashboard/dashboard-plugin.ts'
import type { DatabaseHandle } from './db/database.ts'
import type { Database } from './db/schema.ts'
import { registerOpenApi } from './docs/openapi.ts'
import { problemPages } from './docs/problem-pages.ts'
import { ApiError } from './errors/api-error.ts'
import { registerErrorHandling, sendProblem } from './errors/error-handler.ts'
import { healthRoutes } from './health/health-routes.ts'
import { accountRateLimit } from './http/account-rate-limit.ts'
import { trackAllowedMethods } from './http/allowed-methods.ts'
import { answerClientError } from './http/client-errors.ts'
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from './http/rate-limiter.ts'
import { registerBodyPresence } from './http/request-body.ts'
import { generateRequestId, registerRequestId } from './http/request-id.ts'
import { registerValidation } from './http/validation.ts'
import { KeyAuthenticator } from './keys/keys-service.ts'
import { registerOAuth } from './oauth/oauth-server.ts'
import { v1PetRoutes } from './pets/v1-pet-routes.ts'
import { registerV2Api } from './pets/v2-api.ts'
import { v1UserRoutes } from './users/v1-user-routes.ts'

/** What routes need, built once per app and shared. */
export interface AppDeps {
  config: Config
  db: Kysely<Database>
  database: DatabaseHandle
  keys: KeyAuthenticator
  shuttingDown: { value: boolean }
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps
  }
}

export interface BuildAppOptions {
  config: Config
  database: DatabaseHandle
  /** pino options, or false for silence (tests). Defaults to JSON logs at config.logLevel. */
  logger?: FastifyServerOptions['logger']
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string
}

const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 200 }

/** Builds the whole service; never listens (see server.ts). The database is already migrated. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, database } = options
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    genReqId: generateRequestId,
    // One log line per request, written by our onResponse hook, instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    routerOptions: ROUTER_OPTIONS,
    // Malformed HTTP (bad request line, bad headers, oversized headers) answered as a problem.
    clientErrorHandler: answerClientError,
    // Errors the router raises before any route runs (a malformed URL, say) are problems too.
    frameworkErrors: (error, request, reply) => {
      reply.header('request-id', request.id)
      sendProblem(
        request,
        reply,
        new ApiError('invalid_request', `The request could not be routed: ${error.message}`),
      )
    },
  })

  const keys = new KeyAuthenticator(database.db, {
    cacheMs: config.keyCacheSeconds * 1000,
    onBackgroundError: (error) => app.log.warn({ err: error }, 'could not record API key use'),
  })
  app.decorate('deps', { config, db: database.db, database, keys, shuttingDown: { value: false } })
  app.decorateRequest('principal', null)

  registerValidation(app)
  registerErrorHandling(app, { allowedMethods: trackAllowedMethods(app, ROUTER_OPTIONS) })
  registerRequestId(app)
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request completed',
    )
    done()
  })
  registerBodyPresence(app)
  // Bodies are JSON or form fields; anything else (text/plain included) is a 415, not a string.
  app.removeContentTypeParser('text/plain')
  await app.register(formbody)
  await registerOpenApi(app, version)

  const limiters = createRateLimiters(config)
  app.addHook('onClose', async () => {
    await Promise.all(limiters.all.map((l) => l.close()))
  })

  await app.register(healthRoutes)
  await app.register(problemPages)
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', apiKeyAuthentication({ keys, failedAttempts: limiters.failedAuth }))
      if (limiters.account !== null) v1.addHook('onRequest', accountRateLimit(limiters.account))
      await v1.register(v1PetRoutes)
      await v1.register(v1UserRoutes)
    },
    { prefix: '/v1' },
  )
  // OAuth 2.0 authorisation server (/oauth/*) and the Petstore-compatible v2 API (issue 3).
  const oauth = await registerOAuth(app, { config, db: database.db })
  await app.register(dashboard, { prefix: '/dashboard', oauth })
  await registerV2Api(app, {
    oauth,
    keys,
    failedAttempts: limiters.failedAuth,
    ...(limiters.account === null ? {} : { rateLimit: accountRateLimit(limiters.account) }),
  })
  return app
}

function createRateLimiters(config: Config): {
  account: RateLimiter | null
  failedAuth: RateLimiter
  all: RateLimiter[]
} {
  const redis =
    config.redisUrl === undefined
      ? undefined
      : new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 })
  const make = (rps: number, burst: number, prefix: string): RateLimiter =>
    redis === undefined ? new MemoryRateLimiter(rps, burst) : new RedisRateLimiter(redis, rps, burst, prefix)
  const account =
    config.rateLimitRps === 0
      ? null
      : make(config.rateLimitRps, config.rateLimitBurst, 'pet-service:rl:account:')
  // Guessing keys: 30 failures at once, then one a second, per client address.
  const failedAuth = make(1, 30, 'pet-service:rl:auth-fail:')
  return { account, failedAuth, all: [...(account === null ? [] : [account]), failedAuth] }
}
