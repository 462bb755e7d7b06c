import { isIP } from 'node:net'
import { isAbsolute, resolve } from 'node:path'
import { familyTrustedWhole } from './proxy-ranges.ts'

/**
 * Every setting the service reads from its environment, with its default and meaning.
 * `.env.example` and docs/configuration.md (generated from `CONFIG_OPTIONS` by
 * scripts/write-config-docs.ts) list the same options; tests keep them in step.
 */
export interface Config {
  port: number
  host: string
  databaseUrl: string
  logLevel: LogLevel
  /** Sustained requests per second per account; 0 turns the limit off. */
  rateLimitRps: number
  /** Requests an account may make at once above the sustained rate. */
  rateLimitBurst: number
  /** Shared store for rate limits across instances; in-process memory when unset. */
  redisUrl: string | undefined
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisKeyPrefix: string
  bodyLimitBytes: number
  /** Seconds a validated API key is trusted before it is looked up again (revocations elsewhere). */
  keyCacheSeconds: number
  /** Which peers may say who the client is (`X-Forwarded-*`): none, a number of hops, or addresses. */
  trustProxy: TrustProxy
  /** Seconds to let in-flight requests finish after SIGTERM before the process exits anyway. */
  shutdownGraceSeconds: number
  /** Seconds between SIGTERM (readiness off) and closing the listener, for load balancers to notice. */
  shutdownDrainSeconds: number
  /** Seconds a client has to send a request's headers. */
  httpHeadersTimeoutSeconds: number
  /** Seconds a client has to send a whole request, headers and body. */
  httpRequestTimeoutSeconds: number
  /** Seconds an idle kept-alive connection stays open waiting for the next request. */
  httpKeepAliveTimeoutSeconds: number
  /** Seconds an answer may wait for its client to take any of it before the connection is cut. */
  httpWriteTimeoutSeconds: number
  /** Bytes the answers still on their way to clients may hold in all (a quarter per client address). */
  responseBufferBytes: number
  /** PostgreSQL: connections each process's pool opens at most. */
  dbPoolSize: number
  /** PostgreSQL: seconds to get a connection from the pool (opening one included). */
  dbConnectTimeoutSeconds: number
  /** PostgreSQL: seconds a statement may run, or a transaction sit idle. */
  dbStatementTimeoutSeconds: number
  /** Seconds to wait for a lock another session or process holds (PostgreSQL rows and tables, the SQLite write lock). */
  dbLockTimeoutSeconds: number
  /** PostgreSQL: the connection pooler between the service and the server, by its pool mode. */
  dbPooler: DbPooler
  /** PostgreSQL: whether the queries prepared once go as named statements. */
  dbPreparedStatements: boolean
  /** Seconds /readyz waits for the database before answering 503. */
  readyTimeoutSeconds: number
  /** Seconds to wait for Redis before a rate limit falls back to the instance's own memory. */
  redisTimeoutSeconds: number
  /** Public origin: the OAuth issuer, and links. Required to serve on PostgreSQL (checkServeConfig). */
  publicUrl: string | undefined
  /** Total bytes of uploaded images an account may keep (0: no uploads). */
  imageQuotaBytes: number
  /** Processes `serve` runs on the one port (`auto`: one per core); `serve --workers` overrides. */
  workers: number | 'auto'
  /** Port of the Prometheus `/metrics` listener; 0 turns metrics off. */
  metricsPort: number
  /** Interface of the metrics listener: loopback unless an operator opens it. */
  metricsHost: string
  tracing: TracingConfig
  /** Days an event is kept (the events API, stream replays); older ones are purged in the background. */
  eventsRetentionDays: number
  /** Event streams (`GET /v1/event/stream`) one account may hold open on one instance. */
  eventsStreamsPerAccount: number
  /** Seconds between two heartbeat comments on an idle event stream. */
  eventsHeartbeatSeconds: number
  /** Records every authenticated API request for its account (src/request-logs/). */
  requestLogs: boolean
  /** Days a request log entry is kept; older ones are purged in the background. */
  requestLogRetentionDays: number
  webhooks: WebhooksConfig
  /** Origins (`https://app.example.com`) whose pages may call the API from a browser (src/http/cors.ts). */
  corsOrigins: string[]
}

/** Webhook deliveries (src/webhooks/). */
export interface WebhooksConfig {
  /** Allows http URLs and loopback/private targets: local development and tests only. */
  allowInsecure: boolean
  /** AES-256 key for the signing secrets at rest; a key kept in the database when unset. */
  secretsKey: string | undefined
  /** Seconds an endpoint has to answer a delivery. */
  timeoutSeconds: number
  /** Deliveries sent at once to one endpoint, per instance. */
  concurrencyPerEndpoint: number
  /** Deliveries sent at once for one account (all its endpoints), per instance. */
  concurrencyPerAccount: number
  /** Webhook endpoints one account may have. */
  endpointsPerAccount: number
  /** Days of nothing but failures after which an endpoint is disabled. */
  disableAfterDays: number
}

/**
 * OpenTelemetry tracing, by the standard `OTEL_*` variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). It is on
 * when an exporter, an OTLP endpoint or TRACES_FILE is named and the SDK is not disabled; the
 * SDK itself reads every other `OTEL_*` variable (headers, sampler, resource attributes, timeouts).
 */
export interface TracingConfig {
  enabled: boolean
  serviceName: string
  /** TRACES_FILE: spans as JSON lines in this file, instead of an exporter. */
  file: string | undefined
  /** TRACES_BACKGROUND_RATIO: the share of the database work no request started that is traced (absent: none). */
  backgroundRatio?: number
}

/** PgBouncer's `pool_mode` of a pooler in front of PostgreSQL, or `none` (src/db/postgres-pool.ts). */
export const DB_POOLERS = ['none', 'session', 'transaction'] as const
export type DbPooler = (typeof DB_POOLERS)[number]

const TRACES_EXPORTERS = ['otlp', 'console', 'zipkin', 'none'] as const
const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const

/** Fastify's `trustProxy` forms that do not trust every peer: a hop count, or proxy addresses/ranges. */
export type TrustProxy = false | number | string[]

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

interface Option {
  env: string
  default: string | undefined
  description: string
}

export const CONFIG_OPTIONS: readonly Option[] = [
  { env: 'PORT', default: '8080', description: 'TCP port the HTTP server listens on.' },
  {
    env: 'HOST',
    default: '0.0.0.0',
    description: 'Interface to listen on (`127.0.0.1` to keep the service local).',
  },
  {
    env: 'DATABASE_URL',
    default: 'sqlite:./data/pet-service.db',
    description:
      '`sqlite:PATH` (relative to the working directory, or absolute) for the embedded database, or `postgres://user:pass@host:5432/db` for PostgreSQL.',
  },
  { env: 'LOG_LEVEL', default: 'info', description: `One of ${LOG_LEVELS.join(', ')}.` },
  {
    env: 'RATE_LIMIT_RPS',
    default: '100',
    description: 'Sustained requests per second allowed per account; `0` turns rate limiting off.',
  },
  {
    env: 'RATE_LIMIT_BURST',
    default: '200',
    description: 'Requests an account may send in a burst above the sustained rate.',
  },
  {
    env: 'REDIS_URL',
    default: undefined,
    description:
      'Redis for rate limits shared by several instances (`redis://127.0.0.1:6379`); per-process memory when unset.',
  },
  {
    env: 'REDIS_KEY_PREFIX',
    default: 'pet-service:',
    description:
      'Prefix of every key the service writes to Redis, so several deployments (or test runs) can share one Redis.',
  },
  {
    env: 'BODY_LIMIT_BYTES',
    default: '1048576',
    description: 'Largest request body accepted (413 above it).',
  },
  {
    env: 'KEY_CACHE_SECONDS',
    default: '2',
    description:
      'How long an instance trusts an API key it has checked before reading it again; bounds how late a revocation made on another instance takes effect (at most 5).',
  },
  {
    env: 'TRUST_PROXY',
    default: 'false',
    description:
      'Behind reverse proxies: their number (`1` for one proxy in front), or their addresses and CIDR ranges (`10.0.0.0/8,127.0.0.1`); client address and protocol then come from `X-Forwarded-For`/`-Proto` as those proxies set them. `true` is refused, as are ranges that together cover every address of a family (`0.0.0.0/1,128.0.0.0/1`): either would let any client choose its address. See [Behind a reverse proxy](operations.md#behind-a-reverse-proxy).',
  },
  {
    env: 'SHUTDOWN_DRAIN_SECONDS',
    default: '5',
    description:
      'After SIGTERM/SIGINT, how long `/readyz` answers 503 while requests are still served (with `Connection: close`) before the listener closes.',
  },
  {
    env: 'SHUTDOWN_GRACE_SECONDS',
    default: '10',
    description:
      'Time given to in-flight requests after the listener closes, before the process exits anyway.',
  },
  {
    env: 'HTTP_HEADERS_TIMEOUT_SECONDS',
    default: '10',
    description:
      'Time a client has to send the headers of a request (408 and the connection closed after it).',
  },
  {
    env: 'HTTP_REQUEST_TIMEOUT_SECONDS',
    default: '30',
    description:
      'Time a client has to send a whole request, headers and body (408 and the connection closed after it).',
  },
  {
    env: 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS',
    default: '72',
    description:
      "How long an idle kept-alive connection waits for its next request; longer than load balancers' idle timeouts (60 s is common).",
  },
  {
    env: 'HTTP_WRITE_TIMEOUT_SECONDS',
    default: '30',
    description:
      'Time an answer may wait for its client to take any of it (a client that stopped reading) before the connection is cut.',
  },
  {
    env: 'RESPONSE_BUFFER_BYTES',
    default: '67108864',
    description:
      "Memory the answers still on their way to slow clients (images, large lists) may hold in each process (64 MiB); one client address may hold a quarter of it. Past it such an answer is a 503 (429 `too_many_downloads` past the address's share), with `Retry-After`.",
  },
  {
    env: 'DB_POOL_SIZE',
    default: '10',
    description:
      "PostgreSQL: connections each process's pool opens at most (times instances and workers: mind the server's `max_connections`).",
  },
  {
    env: 'DB_CONNECT_TIMEOUT_SECONDS',
    default: '5',
    description: 'PostgreSQL: time to get a connection (from the pool, or a new one); 503 after it.',
  },
  {
    env: 'DB_STATEMENT_TIMEOUT_SECONDS',
    default: '10',
    description:
      'PostgreSQL: time a statement may run (`statement_timeout`) or a transaction stay idle; a server that stops answering is given 1 s more. 503 after it.',
  },
  {
    env: 'DB_LOCK_TIMEOUT_SECONDS',
    default: '5',
    description:
      "Time to wait for a lock held by another session or process (PostgreSQL `lock_timeout`; SQLite's write lock); 503 after it.",
  },
  {
    env: 'DB_POOLER',
    default: 'none',
    description:
      'PostgreSQL: the pool mode of a connection pooler between the service and PostgreSQL (PgBouncer\'s `pool_mode`): `none`, `session` or `transaction`. Behind a pooler the timeouts are not sent as startup parameters (PgBouncer refuses them): `session` sets them once per connection, `transaction` in each transaction, and statements outside one run under the role\'s settings (see docs/operations.md, "Running behind PgBouncer").',
  },
  {
    env: 'DB_PREPARED_STATEMENTS',
    default: undefined,
    description:
      '`true` or `false`: the hot queries go to PostgreSQL as named prepared statements, parsed and planned once per connection. `false` behind a pooler that does not keep them (PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`); the default is `true`, `false` with `DB_POOLER=transaction`.',
  },
  {
    env: 'READY_TIMEOUT_SECONDS',
    default: '2',
    description: 'Time `/readyz` waits for the database before answering 503.',
  },
  {
    env: 'REDIS_TIMEOUT_SECONDS',
    default: '0.5',
    description:
      "Time to wait for Redis (connecting or answering) before rate limits fall back to each instance's own memory until Redis answers again.",
  },
  {
    env: 'PUBLIC_URL',
    default: undefined,
    description:
      'Public base URL of the service (e.g. `https://pets.example.com`), used in links and as the OAuth issuer. Required to serve on PostgreSQL (the same on every instance); `http://localhost:PORT` when unset on SQLite.',
  },
  {
    env: 'CORS_ORIGINS',
    default: undefined,
    description:
      'Origins whose web pages may call the API from a browser (CORS), separated by commas, each exactly `scheme://host[:port]` (`https://app.example.com,http://localhost:5173`); `*` is refused. None when unset: browsers then keep pages of other origins from reading any answer. See [Build a browser app](browser-apps.md).',
  },
  {
    env: 'IMAGE_QUOTA_BYTES',
    default: '104857600',
    description:
      'Total size of the uploaded pet images an account may keep (100 MiB; `0` refuses uploads). Each image is at most 10 MiB.',
  },
  {
    env: 'WORKERS',
    default: '1',
    description:
      'Processes `serve` runs on the one port, or `auto` for one per core (see [Several workers on one machine](operations.md#several-workers-on-one-machine)); `serve --workers N` overrides it.',
  },
  {
    env: 'METRICS_PORT',
    default: '9464',
    description:
      'Port of the Prometheus `/metrics` listener, separate from the API so it is never public by accident; `0` turns metrics off.',
  },
  {
    env: 'METRICS_HOST',
    default: '127.0.0.1',
    description: 'Interface the metrics listener binds to (`0.0.0.0` to let a scraper on another host in).',
  },
  {
    env: 'EVENTS_RETENTION_DAYS',
    default: '30',
    description:
      'Days an event is kept (`GET /v1/event`, replays of the event stream), and the webhook delivery log with it; older events and finished deliveries are deleted in the background, a bounded batch at a time.',
  },
  {
    env: 'REQUEST_LOGS',
    default: 'true',
    description:
      "Records every authenticated API request for its account (`GET /v1/request_log`, the dashboard's Logs page), written in batches off the request path; `false` records none.",
  },
  {
    env: 'REQUEST_LOG_RETENTION_DAYS',
    default: '7',
    description:
      'Days a request log entry is kept; older entries are deleted in the background, a bounded batch at a time.',
  },
  {
    env: 'EVENTS_STREAMS_PER_ACCOUNT',
    default: '10',
    description:
      'Event streams (`GET /v1/event/stream`) one account may hold open on one instance; one more answers 429.',
  },
  {
    env: 'EVENTS_HEARTBEAT_SECONDS',
    default: '15',
    description:
      'Seconds between the `: heartbeat` comments of an idle event stream, so proxies and clients know it is alive.',
  },
  {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: undefined,
    description:
      'OpenTelemetry collector base URL (`http://collector:4318`); setting it turns tracing on (a span per request, one per database query).',
  },
  {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: undefined,
    description: 'Full URL for traces only (`http://collector:4318/v1/traces`); also turns tracing on.',
  },
  {
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: 'http/protobuf',
    description: `OTLP protocol: ${OTLP_PROTOCOLS.join(', ')}.`,
  },
  {
    env: 'OTEL_TRACES_EXPORTER',
    default: undefined,
    description: `Trace exporter: ${TRACES_EXPORTERS.join(', ')} (\`console\` prints spans; \`none\` keeps tracing off); \`otlp\` when only an endpoint is set.`,
  },
  {
    env: 'OTEL_SERVICE_NAME',
    default: 'pet-service',
    description: 'The `service.name` the spans carry.',
  },
  {
    env: 'OTEL_SDK_DISABLED',
    default: 'false',
    description: '`true` turns tracing off whatever else is set.',
  },
  {
    env: 'TRACES_FILE',
    default: undefined,
    description:
      'A file the spans are appended to, one JSON line each, instead of sending them to an exporter; setting it turns tracing on. For seeing traces locally (docs/operations.md, "Seeing traces locally").',
  },
  {
    env: 'TRACES_BACKGROUND_RATIO',
    default: '0',
    description:
      "The share (0 to 1) of the background work's database operations (event polling, webhook deliveries, purges) traced, each a trace of its own; `0` traces requests only.",
  },
  {
    env: 'WEBHOOKS_ALLOW_INSECURE',
    default: 'false',
    description:
      '`true` lets webhook endpoints use http and loopback or private addresses: for local development and tests only (a warning is logged at start). Link-local (the cloud metadata service), unspecified and multicast addresses stay refused.',
  },
  {
    env: 'WEBHOOK_SECRETS_KEY',
    default: undefined,
    description:
      'Key that encrypts webhook signing secrets at rest: the base64 of 32 random bytes (`openssl rand -base64 32`). When unset, a key is generated once and kept in the database (see [SECURITY.md](SECURITY.md)).',
  },
  {
    env: 'WEBHOOKS_TIMEOUT_SECONDS',
    default: '10',
    description:
      'Time a webhook endpoint has to answer a delivery before it counts as failed and is retried.',
  },
  {
    env: 'WEBHOOKS_CONCURRENCY_PER_ENDPOINT',
    default: '4',
    description: 'Deliveries each instance sends at once to one endpoint.',
  },
  {
    env: 'WEBHOOKS_CONCURRENCY_PER_ACCOUNT',
    default: '8',
    description:
      "Deliveries each instance sends at once for one account, all its endpoints together (an instance sends 32 at once), so that one account's slow endpoints leave room for the others'.",
  },
  {
    env: 'WEBHOOKS_ENDPOINTS_PER_ACCOUNT',
    default: '16',
    description: 'Webhook endpoints one account may have; one more answers 409 `webhook_endpoint_limit`.',
  },
  {
    env: 'WEBHOOKS_DISABLE_AFTER_DAYS',
    default: '5',
    description:
      'An endpoint whose deliveries have all failed for this many days is disabled, with the reason shown.',
  },
]

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

/** Reads and validates the environment; throws one ConfigError listing every bad value. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const read = (name: string): string => {
    const value = env[name]
    if (value !== undefined && value.trim() !== '') return value.trim()
    return CONFIG_OPTIONS.find((o) => o.env === name)?.default ?? ''
  }
  const integer = (name: string, min: number, max: number): number => {
    const raw = read(name)
    const value = Number(raw)
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a whole number from ${min} to ${max}.`)
      return min
    }
    return value
  }
  const seconds = (name: string, min: number, max: number): number => {
    const raw = read(name)
    const value = Number(raw)
    if (!/^\d+(\.\d{1,3})?$/.test(raw) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a number of seconds from ${min} to ${max}.`)
      return min
    }
    return value
  }

  const databaseUrl = read('DATABASE_URL')
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    problems.push(
      `DATABASE_URL=${JSON.stringify(databaseUrl)} must look like sqlite:./data/pet-service.db or postgres://user@host:5432/db.`,
    )
  }
  const logLevel = read('LOG_LEVEL') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)} must be one of ${LOG_LEVELS.join(', ')}.`)
  }
  const redisUrl = env.REDIS_URL?.trim() || undefined
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    problems.push(`REDIS_URL=${JSON.stringify(redisUrl)} must look like redis://127.0.0.1:6379.`)
  }
  const redisKeyPrefix = read('REDIS_KEY_PREFIX')
  if (!/^[\w:.-]{1,64}$/.test(redisKeyPrefix)) {
    problems.push(
      `REDIS_KEY_PREFIX=${JSON.stringify(redisKeyPrefix)} must be 1 to 64 letters, digits or _ : . - (such as pet-service:).`,
    )
  }
  const publicUrl = env.PUBLIC_URL?.trim() || undefined
  if (publicUrl !== undefined && !URL.canParse(publicUrl)) {
    problems.push(
      `PUBLIC_URL=${JSON.stringify(publicUrl)} must be an absolute URL such as https://pets.example.com.`,
    )
  }

  const metricsHost = read('METRICS_HOST')
  const allowInsecure = read('WEBHOOKS_ALLOW_INSECURE').toLowerCase()
  if (allowInsecure !== 'true' && allowInsecure !== 'false') {
    problems.push(`WEBHOOKS_ALLOW_INSECURE=${JSON.stringify(allowInsecure)} must be true or false.`)
  }
  const requestLogs = read('REQUEST_LOGS').toLowerCase()
  if (requestLogs !== 'true' && requestLogs !== 'false') {
    problems.push(`REQUEST_LOGS=${JSON.stringify(requestLogs)} must be true or false.`)
  }
  const secretsKey = env.WEBHOOK_SECRETS_KEY?.trim() || undefined
  if (secretsKey !== undefined && Buffer.from(secretsKey, 'base64').length !== 32) {
    problems.push(
      'WEBHOOK_SECRETS_KEY must be the base64 of 32 random bytes; make one with `openssl rand -base64 32`.',
    )
  }
  const dbPooler = read('DB_POOLER').toLowerCase() as DbPooler
  if (!DB_POOLERS.includes(dbPooler)) {
    problems.push(
      `DB_POOLER=${JSON.stringify(dbPooler)} must be one of ${DB_POOLERS.join(', ')} (PgBouncer's pool_mode).`,
    )
  }
  const preparedStatements =
    read('DB_PREPARED_STATEMENTS').toLowerCase() || String(dbPooler !== 'transaction')
  if (preparedStatements !== 'true' && preparedStatements !== 'false') {
    problems.push(`DB_PREPARED_STATEMENTS=${JSON.stringify(preparedStatements)} must be true or false.`)
  }
  const tracing = readTracing(env, problems)
  const corsOrigins = readCorsOrigins(env.CORS_ORIGINS?.trim() ?? '', problems)

  const config: Config = {
    port: integer('PORT', 0, 65535),
    host: read('HOST'),
    databaseUrl,
    logLevel,
    rateLimitRps: integer('RATE_LIMIT_RPS', 0, 1_000_000),
    rateLimitBurst: integer('RATE_LIMIT_BURST', 1, 1_000_000),
    redisUrl,
    redisKeyPrefix,
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 1024, 100 * 1024 * 1024),
    keyCacheSeconds: integer('KEY_CACHE_SECONDS', 0, 5),
    trustProxy: trustProxy(read('TRUST_PROXY'), problems),
    shutdownGraceSeconds: integer('SHUTDOWN_GRACE_SECONDS', 0, 600),
    shutdownDrainSeconds: seconds('SHUTDOWN_DRAIN_SECONDS', 0, 600),
    httpHeadersTimeoutSeconds: seconds('HTTP_HEADERS_TIMEOUT_SECONDS', 1, 600),
    httpRequestTimeoutSeconds: seconds('HTTP_REQUEST_TIMEOUT_SECONDS', 1, 3600),
    httpKeepAliveTimeoutSeconds: seconds('HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 1, 3600),
    httpWriteTimeoutSeconds: seconds('HTTP_WRITE_TIMEOUT_SECONDS', 1, 3600),
    responseBufferBytes: integer('RESPONSE_BUFFER_BYTES', 1024 * 1024, 2 ** 40),
    dbPoolSize: integer('DB_POOL_SIZE', 1, 1000),
    dbConnectTimeoutSeconds: seconds('DB_CONNECT_TIMEOUT_SECONDS', 0.1, 600),
    dbStatementTimeoutSeconds: seconds('DB_STATEMENT_TIMEOUT_SECONDS', 0.1, 3600),
    dbLockTimeoutSeconds: seconds('DB_LOCK_TIMEOUT_SECONDS', 0.01, 3600),
    dbPooler,
    dbPreparedStatements: preparedStatements === 'true',
    readyTimeoutSeconds: seconds('READY_TIMEOUT_SECONDS', 0.1, 60),
    redisTimeoutSeconds: seconds('REDIS_TIMEOUT_SECONDS', 0.01, 60),
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    imageQuotaBytes: integer('IMAGE_QUOTA_BYTES', 0, 2 ** 50),
    workers: workers(read('WORKERS'), problems),
    metricsPort: integer('METRICS_PORT', 0, 65535),
    metricsHost,
    tracing,
    eventsRetentionDays: integer('EVENTS_RETENTION_DAYS', 1, 3650),
    eventsStreamsPerAccount: integer('EVENTS_STREAMS_PER_ACCOUNT', 1, 10_000),
    eventsHeartbeatSeconds: seconds('EVENTS_HEARTBEAT_SECONDS', 0.01, 3600),
    requestLogs: requestLogs === 'true',
    requestLogRetentionDays: integer('REQUEST_LOG_RETENTION_DAYS', 1, 3650),
    webhooks: {
      allowInsecure: allowInsecure === 'true',
      secretsKey,
      timeoutSeconds: seconds('WEBHOOKS_TIMEOUT_SECONDS', 0.1, 60),
      concurrencyPerEndpoint: integer('WEBHOOKS_CONCURRENCY_PER_ENDPOINT', 1, 100),
      concurrencyPerAccount: integer('WEBHOOKS_CONCURRENCY_PER_ACCOUNT', 1, 32),
      endpointsPerAccount: integer('WEBHOOKS_ENDPOINTS_PER_ACCOUNT', 1, 10_000),
      disableAfterDays: integer('WEBHOOKS_DISABLE_AFTER_DAYS', 1, 365),
    },
    corsOrigins,
  }
  if (config.httpHeadersTimeoutSeconds > config.httpRequestTimeoutSeconds) {
    problems.push(
      `HTTP_HEADERS_TIMEOUT_SECONDS (${config.httpHeadersTimeoutSeconds}) must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${config.httpRequestTimeoutSeconds}): the whole request includes its headers.`,
    )
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/**
 * What serving needs beyond loadConfig (the admin commands do not): on PostgreSQL, where
 * several instances may serve one database, one OAuth issuer shared by all of them.
 */
export function checkServeConfig(config: Config): void {
  if (!config.databaseUrl.startsWith('postgres') || config.publicUrl !== undefined) return
  throw new ConfigError([
    'PUBLIC_URL must be set to serve on PostgreSQL: several instances may serve one database, and each names its OAuth issuer in the tokens it signs; without PUBLIC_URL each would call itself http://localhost:PORT and refuse the tokens of the others. Set it, the same on every instance, to the address clients use (such as https://pets.example.com).',
  ])
}

/** Whether the OTEL_* variables ask for tracing, with the SDK's own spelling rules checked first. */
function readTracing(env: Env, problems: string[]): TracingConfig {
  const value = (name: string): string | undefined => env[name]?.trim() || undefined
  // The specification's booleans: only "true" is true, and anything but true/false is a mistake.
  const disabled = value('OTEL_SDK_DISABLED')?.toLowerCase() ?? 'false'
  if (disabled !== 'true' && disabled !== 'false') {
    problems.push(`OTEL_SDK_DISABLED=${JSON.stringify(disabled)} must be true or false.`)
  }
  const exporters = (value('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
  for (const exporter of exporters) {
    if (!(TRACES_EXPORTERS as readonly string[]).includes(exporter)) {
      problems.push(
        `OTEL_TRACES_EXPORTER=${JSON.stringify(exporter)} must be one of ${TRACES_EXPORTERS.join(', ')}.`,
      )
    }
  }
  const protocol = value('OTEL_EXPORTER_OTLP_PROTOCOL')
  if (protocol !== undefined && !(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    problems.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${JSON.stringify(protocol)} must be one of ${OTLP_PROTOCOLS.join(', ')}.`,
    )
  }
  let endpoint = false
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const url = value(name)
    if (url === undefined) continue
    endpoint = true
    if (!/^https?:\/\//.test(url) || !URL.canParse(url)) {
      problems.push(`${name}=${JSON.stringify(url)} must be an http(s) URL such as http://127.0.0.1:4318.`)
    }
  }
  const file = value('TRACES_FILE')
  const exporting = file !== undefined || (exporters.length > 0 ? !exporters.includes('none') : endpoint)
  const ratio = value('TRACES_BACKGROUND_RATIO') ?? '0'
  const backgroundRatio = Number(ratio)
  if (!/^(0|1|0?\.\d+|1\.0*)$/.test(ratio)) {
    problems.push(
      `TRACES_BACKGROUND_RATIO=${JSON.stringify(ratio)} must be a number from 0 to 1 (0.01 traces one in a hundred).`,
    )
  }
  return {
    enabled: disabled !== 'true' && exporting,
    serviceName: value('OTEL_SERVICE_NAME') ?? 'pet-service',
    file,
    ...(backgroundRatio > 0 && backgroundRatio <= 1 ? { backgroundRatio } : {}),
  }
}

/**
 * CORS_ORIGINS: origins exactly as browsers send them in `Origin` (scheme, host in lower case,
 * port only when not the scheme's default), so an entry matches by plain comparison and a typo
 * fails at start rather than silently matching nothing. `*` is refused: the API's answers are an
 * account's data, and which sites may read them is a choice to make origin by origin.
 */
function readCorsOrigins(raw: string, problems: string[]): string[] {
  const origins: string[] = []
  for (const entry of raw.split(',').map((e) => e.trim())) {
    if (entry === '') continue
    if (entry === '*' || entry === 'null') {
      problems.push(
        `CORS_ORIGINS may not contain ${entry}: list each origin allowed to call the API from a browser (https://app.example.com).`,
      )
      continue
    }
    const url = URL.canParse(entry) ? new URL(entry) : undefined
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      problems.push(
        `CORS_ORIGINS entry ${JSON.stringify(entry)} must be an http or https origin such as https://app.example.com.`,
      )
    } else if (url.origin !== entry) {
      problems.push(
        `CORS_ORIGINS entry ${JSON.stringify(entry)} must be an origin exactly as browsers send it, scheme://host[:port] without a path, user or default port: ${url.origin}.`,
      )
    } else if (!origins.includes(entry)) {
      origins.push(entry)
    }
  }
  return origins
}

const PROXY_ADDRESS_NAMES = ['loopback', 'linklocal', 'uniquelocal']

/**
 * TRUST_PROXY: `false`, a hop count, or proxy addresses and CIDR ranges (the forms Fastify's
 * `trustProxy` takes through proxy-addr). `true` ("every peer is a proxy") is refused: a client
 * could then pick its own address with `X-Forwarded-For` and escape every per-address limit. So
 * are ranges that together cover every address of a family (`0.0.0.0/0`, `0.0.0.0/1,128.0.0.0/1`,
 * `::ffff:0:0/96`), which mean the same.
 */
function trustProxy(raw: string, problems: string[]): TrustProxy {
  const lower = raw.toLowerCase()
  if (['false', 'no', '0'].includes(lower)) return false
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw)
    if (hops <= 20) return hops
  } else if (['true', 'yes'].includes(lower)) {
    problems.push(
      `TRUST_PROXY=${raw} would believe any X-Forwarded-For, letting a client choose its own address; give the number of proxies in front of the service (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8,127.0.0.1).`,
    )
    return false
  } else {
    const entries = raw.split(',').map((entry) => entry.trim())
    if (entries.every(isProxyAddress)) {
      const family = familyTrustedWhole(entries)
      if (family === undefined) return entries
      problems.push(
        `TRUST_PROXY=${raw} trusts every IPv${family} address, which is TRUST_PROXY=true by another spelling: any client could choose its own address with X-Forwarded-For. Give the number of proxies in front of the service (TRUST_PROXY=1) or their own addresses (TRUST_PROXY=10.0.0.0/8,127.0.0.1).`,
      )
      return false
    }
  }
  problems.push(
    `TRUST_PROXY=${JSON.stringify(raw)} must be false, the number of proxies in front of the service (1 to 20), or their addresses and CIDR ranges separated by commas (10.0.0.0/8,::1,loopback).`,
  )
  return false
}

function isProxyAddress(entry: string): boolean {
  if (PROXY_ADDRESS_NAMES.includes(entry)) return true
  const [address = '', bits, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
}

/** Resolves the file behind a `sqlite:` URL against the working directory. */
export function sqlitePath(databaseUrl: string, cwd = process.cwd()): string {
  const path = databaseUrl.replace(/^sqlite:(\/\/)?/, '')
  if (path === ':memory:') return path
  return isAbsolute(path) ? path : resolve(cwd, path)
}

/** WORKERS or `serve --workers`: a whole number from 1 to 1024, or `auto`. */
export function workers(value: string, problems: string[], name = 'WORKERS'): number | 'auto' {
  const text = value.trim().toLowerCase()
  if (text === 'auto') return 'auto'
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < 1 || n > 1024) {
    problems.push(`${name}=${JSON.stringify(value)} must be a whole number from 1 to 1024, or auto.`)
    return 1
  }
  return n
}
