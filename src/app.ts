import { readFileSync } from 'node:fs'
import formbody from '@fastify/formbody'
import type { Tracer } from '@opentelemetry/api'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import type { Kysely } from 'kysely'
import type { Principal } from './access/principal.ts'
import { registerOpenApi } from './api-docs/openapi.ts'
import { problemPages } from './api-docs/problem-pages.ts'
import type { Config } from './config/config.ts'
import { dashboard } from './dashboard/dashboard-plugin.ts'
import type { DatabaseHandle } from './db/database.ts'
import type { Database } from './db/schema.ts'
import { ApiError } from './errors/api-error.ts'
import { registerErrorHandling, sendProblem } from './errors/error-handler.ts'
import { urlForLogs } from './errors/redact.ts'
import { healthRoutes } from './health/health-routes.ts'
import { StorageFullFlag } from './health/storage-full.ts'
import { accountRateLimit } from './http/account-rate-limit.ts'
import { trackAllowedMethods } from './http/allowed-methods.ts'
import { AnswerBudget, registerAnswerBudget } from './http/answer-budget.ts'
import { answerClientError } from './http/client-errors.ts'
import { registerCors } from './http/cors.ts'
import { registerDeprecations } from './http/deprecation.ts'
import { registerJsonBody } from './http/json-body.ts'
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from './http/rate-limiter.ts'
import { registerBodyPresence } from './http/request-body.ts'
import { generateRequestId, registerRequestId } from './http/request-id.ts'
import { SharedRedis } from './http/shared-redis.ts'
import { registerShutdownHooks, ShutdownState } from './http/shutdown.ts'
import { fastifyTrustProxy } from './http/trust-proxy.ts'
import { registerValidation } from './http/validation.ts'
import { registerWriteTimeout } from './http/write-timeout.ts'
import { KeyAuthenticator } from './keys/keys-service.ts'
import { registerMetrics, registerRedisMetrics } from './observability/metrics.ts'
import { traceRequests } from './observability/request-tracing.ts'
import { registerRequestLogMetrics } from './request-logs/request-log-metrics.ts'
import { RequestLogWriter } from './request-logs/request-log-writer.ts'
import { registerOAuth } from './routes/oauth/index.ts'
import { registerRequestLogging } from './routes/request-logging.ts'
import type {} from './routes/request-principal.ts'
import { v1Api } from './routes/v1/index.ts'
import { v2Api } from './routes/v2/index.ts'
import { systemClock } from './webhooks/clock.ts'
import { DeliveryWorker } from './webhooks/delivery-worker.ts'
import { loadSecretBox } from './webhooks/secrets-key.ts'
import { resolveWithDns } from './webhooks/url-policy.ts'
import { registerWebhookMetrics } from './webhooks/webhook-metrics.ts'
import type { WebhooksContext } from './webhooks/webhooks-service.ts'

/** What routes need, built once per app and shared. */
export interface AppDeps {
  config: Config
  /** The memory answers still being sent may hold (RESPONSE_BUFFER_BYTES). */
  answers: AnswerBudget
  db: Kysely<Database>
  database: DatabaseHandle
  keys: KeyAuthenticator
  /** Request log entries, written in batches (src/request-logs/); takes none when REQUEST_LOGS=false. */
  requestLogs: RequestLogWriter
  /** Set on SIGTERM (readiness off, `Connection: close`), then when the listener closes. */
  shutdown: ShutdownState
  /** Raised when the database reports it is full; /readyz answers 503 while it is. */
  storageFull: StorageFullFlag
  /** Webhooks: the secrets' key, the URL policy and the clock (src/webhooks/). */
  webhooks: WebhooksContext
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
  /** OpenTelemetry tracer when tracing is on (src/observability/tracing.ts); no spans without. */
  tracer?: Tracer
  /** Tests: a DNS and a clock of their own for the webhooks. */
  webhooks?: Partial<Pick<WebhooksContext, 'resolve' | 'clock'>>
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
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // Slow clients (https://nodejs.org/api/http.html#serverrequesttimeout): the headers, then the
    // whole request, must arrive in time, or the answer is a 408 and the connection is closed;
    // Node checks every connection against these each second.
    http: {
      headersTimeout: config.httpHeadersTimeoutSeconds * 1000,
      connectionsCheckingInterval: 1000,
    },
    requestTimeout: config.httpRequestTimeoutSeconds * 1000,
    keepAliveTimeout: config.httpKeepAliveTimeoutSeconds * 1000,
    // Malformed HTTP (bad request line, bad headers, oversized headers) and slow clients are
    // answered as problems too.
    clientErrorHandler: answerClientError,
    // While closing, requests get our 503 problem (see src/http/shutdown.ts), not Fastify's body.
    return503OnClosing: false,
    routerOptions: ROUTER_OPTIONS,
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
  const storageFull = new StorageFullFlag()
  const webhooks: WebhooksContext = {
    box: await loadSecretBox(database.db, config.webhooks.secretsKey),
    insecure: config.webhooks.allowInsecure,
    resolve: options.webhooks?.resolve ?? resolveWithDns,
    clock: options.webhooks?.clock ?? systemClock,
    endpointsPerAccount: config.webhooks.endpointsPerAccount,
  }
  // The background connections (see DatabaseHandle.background): a slow insert never takes one a
  // request waits for.
  const requestLogs = new RequestLogWriter(database.background, {
    batch: 200,
    capacity: 10_000,
    intervalMs: 200,
    onError: (error) => app.log.warn({ err: error }, 'could not store request log entries'),
  })
  app.decorate('deps', {
    config,
    answers: new AnswerBudget(config.responseBufferBytes),
    db: database.db,
    database,
    keys,
    requestLogs,
    shutdown: new ShutdownState(app.server),
    storageFull,
    webhooks,
  })
  app.decorateRequest('principal', null)

  // First, so their hooks see every request, and every route registered after them.
  if (options.tracer !== undefined) traceRequests(app, options.tracer)
  if (config.metricsPort !== 0) registerMetrics(app, database)
  registerDeprecations(app)
  registerValidation(app)
  registerErrorHandling(app, { allowedMethods: trackAllowedMethods(app, ROUTER_OPTIONS) })
  registerRequestId(app)
  registerCors(app, config.corsOrigins)
  registerShutdownHooks(app)
  registerWriteTimeout(app, config.httpWriteTimeoutSeconds * 1000)
  registerAnswerBudget(app)
  app.addHook('onResponse', (request, reply, done) => {
    // At LOG_LEVEL=warn or above the line is dropped: the fields (the URL's redaction above all)
    // are not worked out for nothing.
    if (logsInfo(request.log))
      request.log.info(
        {
          method: request.method,
          url: urlForLogs(request.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          ...principalFields(request.principal),
        },
        'request completed',
      )
    // Something was stored: the database has room again.
    if (reply.statusCode === 201) storageFull.clear()
    done()
  })
  if (config.requestLogs) {
    registerRequestLogging(app, requestLogs)
    requestLogs.start()
  } else {
    // Nothing records, and the token endpoint's entries are refused as well.
    await requestLogs.close()
  }
  if (app.metrics !== undefined) registerRequestLogMetrics(app.metrics, requestLogs)
  // The entries still buffered are written before the database closes (server.ts closes them
  // first; apps built by tests close their database after the app).
  app.addHook('onClose', () => requestLogs.close())
  registerBodyPresence(app)
  // Bodies are JSON or form fields; anything else (text/plain included) is a 415, not a string.
  app.removeContentTypeParser('text/plain')
  registerJsonBody(app)
  await app.register(formbody)
  await registerOpenApi(app, version, config.publicUrl)

  const limiters = createRateLimiters(config, app.log)
  if (app.metrics !== undefined && limiters.redis !== undefined)
    registerRedisMetrics(app.metrics, limiters.redis)
  app.addHook('onClose', async () => {
    await Promise.all(limiters.all.map((l) => l.close()))
  })

  await app.register(healthRoutes)
  await app.register(problemPages)
  const rateLimit = limiters.account === null ? {} : { rateLimit: accountRateLimit(limiters.account) }
  await app.register(v1Api, { prefix: '/v1', keys, failedAttempts: limiters.failedAuth, ...rateLimit })
  // OAuth 2.0 authorisation server (/oauth/*) and the Petstore-compatible v2 API (issue 3).
  const oauth = await registerOAuth(app, {
    config,
    db: database.db,
    authorizeLimiter: limiters.authorize,
    failedAttempts: limiters.failedAuth,
  })
  await app.register(dashboard, { prefix: '/dashboard', oauth })
  await app.register(v2Api, { prefix: '/v2', oauth, keys, failedAttempts: limiters.failedAuth, ...rateLimit })
  return app
}

/**
 * Starts the webhooks worker (src/webhooks/delivery-worker.ts) once the app is ready. The caller stops it
 * (`stop()`: no more claims, the sends under way finish, each cut at the timeout) when the app
 * closes, before closing the database.
 */
export function startWebhookWorker(app: FastifyInstance, database: DatabaseHandle): DeliveryWorker {
  const { config, webhooks } = app.deps
  if (config.webhooks.allowInsecure) {
    app.log.warn(
      'WEBHOOKS_ALLOW_INSECURE=true: webhook endpoints may use http and loopback or private addresses. For local development only; never in production.',
    )
  }
  // Counted as they arrive, not as they are answered: requests the worker starves of the loop
  // still count, so starving them cannot look like a quiet process (see CpuShare).
  let received = 0
  app.addHook('onRequest', (_request, _reply, done) => {
    received++
    done()
  })
  const worker = new DeliveryWorker({
    // Its own connections on PostgreSQL (see DatabaseHandle.background): a floor of progress
    // however many requests wait for the main pool.
    db: database.background,
    box: webhooks.box,
    clock: webhooks.clock,
    resolve: webhooks.resolve,
    insecure: webhooks.insecure,
    timeoutMs: config.webhooks.timeoutSeconds * 1000,
    concurrencyPerEndpoint: config.webhooks.concurrencyPerEndpoint,
    concurrencyPerAccount: config.webhooks.concurrencyPerAccount,
    disableAfterDays: config.webhooks.disableAfterDays,
    log: app.log.child({ component: 'webhooks' }),
    requestsReceived: () => received,
    ...(app.metrics === undefined
      ? {}
      : { observer: registerWebhookMetrics(app.metrics, database.background, webhooks.clock) }),
  })
  // Not before: its first round opens a connection of the background pool, and the boot's own
  // work could hold the event loop past DB_CONNECT_TIMEOUT_SECONDS while that connection opens.
  app.addHook('onReady', async () => worker.start())
  return worker
}

/** Authorization requests per client address: 30 at once, then one every 2 s (README, Limits). */
export const AUTHORIZE_RATE_LIMIT = { ratePerSecond: 0.5, burst: 30 } as const

/** Whether `log` writes info lines; a logger that cannot tell (not pino) is asked to write them. */
function logsInfo(log: FastifyBaseLogger): boolean {
  return (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? true
}

/** Who the request acted for, by ids only: the account, and the API key's or OAuth client's id. */
function principalFields(principal: Principal | null): Record<string, string> {
  if (principal === null) return {}
  return principal.via === 'api_key'
    ? { account_id: principal.accountId, key_id: principal.credentialId }
    : { account_id: principal.accountId, client_id: principal.credentialId }
}

function createRateLimiters(
  config: Config,
  log: FastifyBaseLogger,
): {
  account: RateLimiter | null
  failedAuth: RateLimiter
  authorize: RateLimiter
  all: RateLimiter[]
  redis: SharedRedis | undefined
} {
  const redis =
    config.redisUrl === undefined
      ? undefined
      : new SharedRedis(config.redisUrl, config.redisTimeoutSeconds * 1000, log)
  const make = (rps: number, burst: number, name: string): RateLimiter =>
    redis === undefined
      ? new MemoryRateLimiter(rps, burst)
      : new RedisRateLimiter(redis, rps, burst, `${config.redisKeyPrefix}rl:${name}:`)
  const account =
    config.rateLimitRps === 0 ? null : make(config.rateLimitRps, config.rateLimitBurst, 'account')
  // Guessing keys: 30 failures at once, then one a second, per client address.
  const failedAuth = make(1, 30, 'auth-fail')
  const authorize = make(AUTHORIZE_RATE_LIMIT.ratePerSecond, AUTHORIZE_RATE_LIMIT.burst, 'authorize')
  return {
    account,
    failedAuth,
    authorize,
    all: [...(account === null ? [] : [account]), failedAuth, authorize],
    redis,
  }
}
