import { isIP } from 'node:net'
import { isAbsolute, resolve } from 'node:path'
import { familyTrustedWhole } from './proxy-ranges.ts'

/**
 * Every setting the service reads from its environment, written once: the tables below give each
 * option its variable, default, meaning and parser. The `Config` type, `loadConfig`, `.env.example`
 * and docs/configuration.md (scripts/write-config-docs.ts) all follow from them; tests keep the
 * two files in step.
 */
interface OptionSpec<T> {
  env: string
  /** The text used when the variable is unset or blank; parsed like any other. */
  default?: string
  /** docs/configuration.md's "Meaning" (Markdown), also the comment in `.env.example`. */
  description: string
  /** Shown commented out in `.env.example` for an option without a default. */
  example?: string
  parse: Parse<T>
}

/** Turns an option's text into its value, naming a bad value in `problems` (see ReadContext). */
type Parse<T> = (raw: string | undefined, read: ReadContext) => T

interface ReadContext {
  name: string
  problems: string[]
  /** Another option's text (trimmed, or its default), for an option whose default follows from it. */
  raw(env: string): string | undefined
}

type OptionTable = Record<string, OptionSpec<unknown>>
type ValuesOf<T extends OptionTable> = { [K in keyof T]: ReturnType<T[K]['parse']> }

/** PgBouncer's `pool_mode` of a pooler in front of PostgreSQL, or `none` (src/db/postgres-pool.ts). */
export const DB_POOLERS = ['none', 'session', 'transaction'] as const
export type DbPooler = (typeof DB_POOLERS)[number]

const TRACES_EXPORTERS = ['otlp', 'console', 'zipkin', 'none'] as const
const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const

/** Fastify's `trustProxy` forms that do not trust every peer: a hop count, or proxy addresses/ranges. */
export type TrustProxy = false | number | string[]

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const integer =
  (min: number, max: number): Parse<number> =>
  (raw = '', { name, problems }) => {
    const value = Number(raw)
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a whole number from ${min} to ${max}.`)
      return min
    }
    return value
  }

const seconds =
  (min: number, max: number): Parse<number> =>
  (raw = '', { name, problems }) => {
    const value = Number(raw)
    if (!/^\d+(\.\d{1,3})?$/.test(raw) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a number of seconds from ${min} to ${max}.`)
      return min
    }
    return value
  }

const text: Parse<string> = (raw = '') => raw
const optional: Parse<string | undefined> = (raw) => raw

/** Only `true` and `false` (any case), as OpenTelemetry's booleans: anything else is a mistake. */
const boolean: Parse<boolean> = (raw = '', { name, problems }) => {
  const value = raw.toLowerCase()
  if (value !== 'true' && value !== 'false') {
    problems.push(`${name}=${JSON.stringify(value)} must be true or false.`)
  }
  return value === 'true'
}

const oneOf =
  <T extends string>(values: readonly T[], { lowerCase = false, hint = '' } = {}): Parse<T> =>
  (raw = '', { name, problems }) => {
    const value = (lowerCase ? raw.toLowerCase() : raw) as T
    if (!values.includes(value)) {
      problems.push(`${name}=${JSON.stringify(value)} must be one of ${values.join(', ')}${hint}.`)
    }
    return value
  }

/** Text that must match a pattern when set; the message shows what it should look like. */
const matching =
  (pattern: RegExp, example: string): Parse<string | undefined> =>
  (raw, { name, problems }) => {
    if (raw !== undefined && !pattern.test(raw)) {
      problems.push(`${name}=${JSON.stringify(raw)} must look like ${example}.`)
    }
    return raw
  }

const httpUrl: Parse<string | undefined> = (raw, { name, problems }) => {
  if (raw !== undefined && (!/^https?:\/\//.test(raw) || !URL.canParse(raw))) {
    problems.push(`${name}=${JSON.stringify(raw)} must be an http(s) URL such as http://127.0.0.1:4318.`)
  }
  return raw
}

/** The service's own settings, in the order docs/configuration.md and `.env.example` list them. */
const SERVICE_OPTIONS = {
  port: {
    env: 'PORT',
    default: '8080',
    description: 'TCP port the HTTP server listens on.',
    parse: integer(0, 65535),
  },
  host: {
    env: 'HOST',
    default: '0.0.0.0',
    description: 'Interface to listen on (`127.0.0.1` to keep the service local).',
    parse: text,
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    default: 'sqlite:./data/pet-service.db',
    description:
      '`sqlite:PATH` (relative to the working directory, or absolute) for the embedded database, or `postgres://user:pass@host:5432/db` for PostgreSQL.',
    parse: (raw = '', { name, problems }) => {
      if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(raw)) {
        problems.push(
          `${name}=${JSON.stringify(raw)} must look like sqlite:./data/pet-service.db or postgres://user@host:5432/db.`,
        )
      }
      return raw
    },
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    description: `One of ${LOG_LEVELS.join(', ')}.`,
    parse: oneOf(LOG_LEVELS),
  },
  /** Sustained requests per second per account; 0 turns the limit off. */
  rateLimitRps: {
    env: 'RATE_LIMIT_RPS',
    default: '100',
    description: 'Sustained requests per second allowed per account; `0` turns rate limiting off.',
    parse: integer(0, 1_000_000),
  },
  rateLimitBurst: {
    env: 'RATE_LIMIT_BURST',
    default: '200',
    description: 'Requests an account may send in a burst above the sustained rate.',
    parse: integer(1, 1_000_000),
  },
  /** Shared store for rate limits across instances; in-process memory when unset. */
  redisUrl: {
    env: 'REDIS_URL',
    description:
      'Redis for rate limits shared by several instances (`redis://127.0.0.1:6379`); per-process memory when unset.',
    example: 'redis://127.0.0.1:6379',
    parse: matching(/^rediss?:\/\/.+/, 'redis://127.0.0.1:6379'),
  },
  redisKeyPrefix: {
    env: 'REDIS_KEY_PREFIX',
    default: 'pet-service:',
    description:
      'Prefix of every key the service writes to Redis, so several deployments (or test runs) can share one Redis.',
    parse: (raw = '', { name, problems }) => {
      if (!/^[\w:.-]{1,64}$/.test(raw)) {
        problems.push(
          `${name}=${JSON.stringify(raw)} must be 1 to 64 letters, digits or _ : . - (such as pet-service:).`,
        )
      }
      return raw
    },
  },
  bodyLimitBytes: {
    env: 'BODY_LIMIT_BYTES',
    default: '1048576',
    description: 'Largest request body accepted (413 above it).',
    parse: integer(1024, 100 * 1024 * 1024),
  },
  /** Seconds a validated API key is trusted before it is looked up again (revocations elsewhere). */
  keyCacheSeconds: {
    env: 'KEY_CACHE_SECONDS',
    default: '2',
    description:
      'How long an instance trusts an API key it has checked before reading it again; bounds how late a revocation made on another instance takes effect (at most 5).',
    parse: integer(0, 5),
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    default: 'false',
    description:
      'Behind reverse proxies: their number (`1` for one proxy in front), or their addresses and CIDR ranges (`10.0.0.0/8,127.0.0.1`); client address and protocol then come from `X-Forwarded-For`/`-Proto` as those proxies set them. `true` is refused, as are ranges that together cover every address of a family (`0.0.0.0/1,128.0.0.0/1`): either would let any client choose its address. See [Behind a reverse proxy](operations.md#behind-a-reverse-proxy).',
    parse: (raw = '', { problems }) => trustProxy(raw, problems),
  },
  shutdownDrainSeconds: {
    env: 'SHUTDOWN_DRAIN_SECONDS',
    default: '5',
    description:
      'After SIGTERM/SIGINT, how long `/readyz` answers 503 while requests are still served (with `Connection: close`) before the listener closes.',
    parse: seconds(0, 600),
  },
  shutdownGraceSeconds: {
    env: 'SHUTDOWN_GRACE_SECONDS',
    default: '10',
    description:
      'Time given to in-flight requests after the listener closes, before the process exits anyway.',
    parse: integer(0, 600),
  },
  httpHeadersTimeoutSeconds: {
    env: 'HTTP_HEADERS_TIMEOUT_SECONDS',
    default: '10',
    description:
      'Time a client has to send the headers of a request (408 and the connection closed after it).',
    parse: seconds(1, 600),
  },
  httpRequestTimeoutSeconds: {
    env: 'HTTP_REQUEST_TIMEOUT_SECONDS',
    default: '30',
    description:
      'Time a client has to send a whole request, headers and body (408 and the connection closed after it).',
    parse: seconds(1, 3600),
  },
  httpKeepAliveTimeoutSeconds: {
    env: 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS',
    default: '72',
    description:
      "How long an idle kept-alive connection waits for its next request; longer than load balancers' idle timeouts (60 s is common).",
    parse: seconds(1, 3600),
  },
  httpWriteTimeoutSeconds: {
    env: 'HTTP_WRITE_TIMEOUT_SECONDS',
    default: '30',
    description:
      'Time an answer may wait for its client to take any of it (a client that stopped reading) before the connection is cut.',
    parse: seconds(1, 3600),
  },
  responseBufferBytes: {
    env: 'RESPONSE_BUFFER_BYTES',
    default: '67108864',
    description:
      "Memory the answers still on their way to slow clients (images, large lists) may hold in each process (64 MiB); one client address may hold a quarter of it. Past it such an answer is a 503 (429 `too_many_downloads` past the address's share), with `Retry-After`.",
    parse: integer(1024 * 1024, 2 ** 40),
  },
  dbPoolSize: {
    env: 'DB_POOL_SIZE',
    default: '10',
    description:
      "PostgreSQL: connections each process's pool opens at most (times instances and workers: mind the server's `max_connections`).",
    parse: integer(1, 1000),
  },
  dbBackgroundPoolSize: {
    env: 'DB_BACKGROUND_POOL_SIZE',
    default: '2',
    description:
      "PostgreSQL: connections each process's background pool opens at most: the webhook deliveries, the purges and the event streams' poller, kept apart from the requests' pool so that neither can starve the other (each process opens up to `DB_POOL_SIZE` + `DB_BACKGROUND_POOL_SIZE`; times instances and workers: mind the server's `max_connections`).",
    parse: integer(1, 100),
  },
  dbConnectTimeoutSeconds: {
    env: 'DB_CONNECT_TIMEOUT_SECONDS',
    default: '5',
    description: 'PostgreSQL: time to get a connection (from the pool, or a new one); 503 after it.',
    parse: seconds(0.1, 600),
  },
  dbStatementTimeoutSeconds: {
    env: 'DB_STATEMENT_TIMEOUT_SECONDS',
    default: '10',
    description:
      'PostgreSQL: time a statement may run (`statement_timeout`) or a transaction stay idle; a server that stops answering is given 1 s more. 503 after it.',
    parse: seconds(0.1, 3600),
  },
  dbLockTimeoutSeconds: {
    env: 'DB_LOCK_TIMEOUT_SECONDS',
    default: '5',
    description:
      "Time to wait for a lock held by another session or process (PostgreSQL `lock_timeout`; SQLite's write lock); 503 after it.",
    parse: seconds(0.01, 3600),
  },
  dbPooler: {
    env: 'DB_POOLER',
    default: 'none',
    description:
      'PostgreSQL: the pool mode of a connection pooler between the service and PostgreSQL (PgBouncer\'s `pool_mode`): `none`, `session` or `transaction`. Behind a pooler the timeouts are not sent as startup parameters (PgBouncer refuses them): `session` sets them once per connection, `transaction` in each transaction, and statements outside one run under the role\'s settings (see docs/operations.md, "Running behind PgBouncer").',
    parse: oneOf(DB_POOLERS, { lowerCase: true, hint: " (PgBouncer's pool_mode)" }),
  },
  dbPreparedStatements: {
    env: 'DB_PREPARED_STATEMENTS',
    description:
      '`true` or `false`: the hot queries go to PostgreSQL as named prepared statements, parsed and planned once per connection. `false` behind a pooler that does not keep them (PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`); the default is `true`, `false` with `DB_POOLER=transaction`.',
    example: 'true',
    parse: (raw, read) =>
      boolean(raw ?? String(read.raw('DB_POOLER')?.toLowerCase() !== 'transaction'), read),
  },
  readyTimeoutSeconds: {
    env: 'READY_TIMEOUT_SECONDS',
    default: '2',
    description: 'Time `/readyz` waits for the database before answering 503.',
    parse: seconds(0.1, 60),
  },
  /** Seconds to wait for Redis before a rate limit falls back to the instance's own memory. */
  redisTimeoutSeconds: {
    env: 'REDIS_TIMEOUT_SECONDS',
    default: '0.5',
    description:
      "Time to wait for Redis (connecting or answering) before rate limits fall back to each instance's own memory until Redis answers again.",
    parse: seconds(0.01, 60),
  },
  /** Public origin: the OAuth issuer, and links. Required to serve on PostgreSQL (checkServeConfig). */
  publicUrl: {
    env: 'PUBLIC_URL',
    description:
      'Public base URL of the service (e.g. `https://pets.example.com`), used in links and as the OAuth issuer. Required to serve on PostgreSQL (the same on every instance); `http://localhost:PORT` when unset on SQLite.',
    example: 'https://pets.example.com',
    parse: (raw, { name, problems }) => {
      if (raw !== undefined && !URL.canParse(raw)) {
        problems.push(
          `${name}=${JSON.stringify(raw)} must be an absolute URL such as https://pets.example.com.`,
        )
      }
      return raw?.replace(/\/+$/, '')
    },
  },
  /** Origins (`https://app.example.com`) whose pages may call the API from a browser (src/http/cors.ts). */
  corsOrigins: {
    env: 'CORS_ORIGINS',
    description:
      'Origins whose web pages may call the API from a browser (CORS), separated by commas, each exactly `scheme://host[:port]` (`https://app.example.com,http://localhost:5173`); `*` is refused. None when unset: browsers then keep pages of other origins from reading any answer. See [Build a browser app](browser-apps.md).',
    example: 'https://app.example.com,http://localhost:5173',
    parse: (raw = '', { problems }) => readCorsOrigins(raw, problems),
  },
  imageQuotaBytes: {
    env: 'IMAGE_QUOTA_BYTES',
    default: '104857600',
    description:
      'Total size of the uploaded pet images an account may keep (100 MiB; `0` refuses uploads). Each image is at most 10 MiB.',
    parse: integer(0, 2 ** 50),
  },
  workers: {
    env: 'WORKERS',
    default: '1',
    description:
      'Processes `serve` runs on the one port, or `auto` for one per core (see [Several workers on one machine](operations.md#several-workers-on-one-machine)); `serve --workers N` overrides it.',
    parse: (raw = '', { problems }) => workers(raw, problems),
  },
  metricsPort: {
    env: 'METRICS_PORT',
    default: '9464',
    description:
      'Port of the Prometheus `/metrics` listener, separate from the API so it is never public by accident; `0` turns metrics off.',
    parse: integer(0, 65535),
  },
  metricsHost: {
    env: 'METRICS_HOST',
    default: '127.0.0.1',
    description: 'Interface the metrics listener binds to (`0.0.0.0` to let a scraper on another host in).',
    parse: text,
  },
  eventsRetentionDays: {
    env: 'EVENTS_RETENTION_DAYS',
    default: '30',
    description:
      'Days an event is kept (`GET /v1/event`, replays of the event stream), and the webhook delivery log with it; older events and finished deliveries are deleted in the background, a bounded batch at a time.',
    parse: integer(1, 3650),
  },
  requestLogs: {
    env: 'REQUEST_LOGS',
    default: 'true',
    description:
      "Records every authenticated API request for its account (`GET /v1/request_log`, the dashboard's Logs page), written in batches off the request path; `false` records none.",
    parse: boolean,
  },
  requestLogRetentionDays: {
    env: 'REQUEST_LOG_RETENTION_DAYS',
    default: '7',
    description:
      'Days a request log entry is kept; older entries are deleted in the background, a bounded batch at a time.',
    parse: integer(1, 3650),
  },
  eventsStreamsPerAccount: {
    env: 'EVENTS_STREAMS_PER_ACCOUNT',
    default: '10',
    description:
      'Event streams (`GET /v1/event/stream`) one account may hold open on one instance; one more answers 429.',
    parse: integer(1, 10_000),
  },
  eventsHeartbeatSeconds: {
    env: 'EVENTS_HEARTBEAT_SECONDS',
    default: '15',
    description:
      'Seconds between the `: heartbeat` comments of an idle event stream, so proxies and clients know it is alive.',
    parse: seconds(0.01, 3600),
  },
} satisfies OptionTable

/**
 * OpenTelemetry tracing, by the standard `OTEL_*` variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), with the
 * SDK's own spelling rules checked at start. The SDK itself reads every other `OTEL_*` variable
 * (headers, sampler, resource attributes, timeouts).
 */
const TRACING_OPTIONS = {
  endpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description:
      'OpenTelemetry collector base URL (`http://collector:4318`); setting it turns tracing on (a span per request, one per database query).',
    example: 'http://127.0.0.1:4318',
    parse: httpUrl,
  },
  tracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    description: 'Full URL for traces only (`http://collector:4318/v1/traces`); also turns tracing on.',
    example: 'http://127.0.0.1:4318/v1/traces',
    parse: httpUrl,
  },
  protocol: {
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: 'http/protobuf',
    description: `OTLP protocol: ${OTLP_PROTOCOLS.join(', ')}.`,
    parse: oneOf(OTLP_PROTOCOLS),
  },
  exporters: {
    env: 'OTEL_TRACES_EXPORTER',
    description: `Trace exporter: ${TRACES_EXPORTERS.join(', ')} (\`console\` prints spans; \`none\` keeps tracing off); \`otlp\` when only an endpoint is set.`,
    example: 'otlp',
    parse: (raw = '', read) =>
      raw
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '')
        .map((exporter) => oneOf(TRACES_EXPORTERS)(exporter, read)),
  },
  serviceName: {
    env: 'OTEL_SERVICE_NAME',
    default: 'pet-service',
    description: 'The `service.name` the spans carry.',
    parse: text,
  },
  sdkDisabled: {
    env: 'OTEL_SDK_DISABLED',
    default: 'false',
    description: '`true` turns tracing off whatever else is set.',
    parse: boolean,
  },
  /** TRACES_FILE: spans as JSON lines in this file, instead of an exporter. */
  file: {
    env: 'TRACES_FILE',
    description:
      'A file the spans are appended to, one JSON line each, instead of sending them to an exporter; setting it turns tracing on. For seeing traces locally (docs/operations.md, "Seeing traces locally").',
    example: './traces.jsonl',
    parse: optional,
  },
  backgroundRatio: {
    env: 'TRACES_BACKGROUND_RATIO',
    default: '0',
    description:
      "The share (0 to 1) of the background work's database operations (event polling, webhook deliveries, purges) traced, each a trace of its own; `0` traces requests only.",
    parse: (raw = '', { name, problems }) => {
      if (!/^(0|1|0?\.\d+|1\.0*)$/.test(raw)) {
        problems.push(
          `${name}=${JSON.stringify(raw)} must be a number from 0 to 1 (0.01 traces one in a hundred).`,
        )
      }
      return Number(raw)
    },
  },
} satisfies OptionTable

/** Webhook deliveries (src/webhooks/). */
const WEBHOOK_OPTIONS = {
  /** Allows http URLs and loopback/private targets: local development and tests only. */
  allowInsecure: {
    env: 'WEBHOOKS_ALLOW_INSECURE',
    default: 'false',
    description:
      '`true` lets webhook endpoints use http and loopback or private addresses: for local development and tests only (a warning is logged at start). Link-local (the cloud metadata service), unspecified and multicast addresses stay refused.',
    parse: boolean,
  },
  /** AES-256 key for the signing secrets at rest; a key kept in the database when unset. */
  secretsKey: {
    env: 'WEBHOOK_SECRETS_KEY',
    description:
      'Key that encrypts webhook signing secrets at rest: the base64 of 32 random bytes (`openssl rand -base64 32`). When unset, a key is generated once and kept in the database (see [SECURITY.md](SECURITY.md)).',
    parse: (raw, { problems }) => {
      if (raw !== undefined && Buffer.from(raw, 'base64').length !== 32) {
        problems.push(
          'WEBHOOK_SECRETS_KEY must be the base64 of 32 random bytes; make one with `openssl rand -base64 32`.',
        )
      }
      return raw
    },
  },
  timeoutSeconds: {
    env: 'WEBHOOKS_TIMEOUT_SECONDS',
    default: '10',
    description:
      'Time a webhook endpoint has to answer a delivery before it counts as failed and is retried.',
    parse: seconds(0.1, 60),
  },
  concurrencyPerEndpoint: {
    env: 'WEBHOOKS_CONCURRENCY_PER_ENDPOINT',
    default: '4',
    description: 'Deliveries each instance sends at once to one endpoint.',
    parse: integer(1, 100),
  },
  concurrencyPerAccount: {
    env: 'WEBHOOKS_CONCURRENCY_PER_ACCOUNT',
    default: '8',
    description:
      "Deliveries each instance sends at once for one account, all its endpoints together (an instance sends 32 at once), so that one account's slow endpoints leave room for the others'.",
    parse: integer(1, 32),
  },
  endpointsPerAccount: {
    env: 'WEBHOOKS_ENDPOINTS_PER_ACCOUNT',
    default: '16',
    description: 'Webhook endpoints one account may have; one more answers 409 `webhook_endpoint_limit`.',
    parse: integer(1, 10_000),
  },
  disableAfterDays: {
    env: 'WEBHOOKS_DISABLE_AFTER_DAYS',
    default: '5',
    description:
      'An endpoint whose deliveries have all failed for this many days is disabled, with the reason shown.',
    parse: integer(1, 365),
  },
} satisfies OptionTable

export type WebhooksConfig = ValuesOf<typeof WEBHOOK_OPTIONS>

/** Tracing is on when an exporter, an OTLP endpoint or TRACES_FILE is named and the SDK is not disabled. */
function tracingConfig(o: ValuesOf<typeof TRACING_OPTIONS>) {
  const exporting =
    o.file !== undefined ||
    (o.exporters.length > 0
      ? !o.exporters.includes('none')
      : o.endpoint !== undefined || o.tracesEndpoint !== undefined)
  return {
    enabled: !o.sdkDisabled && exporting,
    serviceName: o.serviceName,
    /** TRACES_FILE: spans as JSON lines in this file, instead of an exporter. */
    file: o.file,
    /** The share of the database work no request started that is traced (absent: none). */
    ...(o.backgroundRatio > 0 && o.backgroundRatio <= 1 ? { backgroundRatio: o.backgroundRatio } : {}),
  }
}
export type TracingConfig = ReturnType<typeof tracingConfig>

export type Config = ValuesOf<typeof SERVICE_OPTIONS> & {
  tracing: TracingConfig
  webhooks: WebhooksConfig
}

/** Every option, in the order the docs list them: what scripts/write-config-docs.ts renders. */
export const CONFIG_OPTIONS: readonly Omit<OptionSpec<unknown>, 'parse'>[] = [
  ...Object.values(SERVICE_OPTIONS),
  ...Object.values(TRACING_OPTIONS),
  ...Object.values(WEBHOOK_OPTIONS),
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
  const raw = (name: string): string | undefined =>
    env[name]?.trim() || CONFIG_OPTIONS.find((o) => o.env === name)?.default
  const read = <T extends OptionTable>(table: T): ValuesOf<T> =>
    Object.fromEntries(
      Object.entries(table).map(([key, option]) => [
        key,
        option.parse(raw(option.env), { name: option.env, problems, raw }),
      ]),
    ) as ValuesOf<T>

  const config: Config = {
    ...read(SERVICE_OPTIONS),
    tracing: tracingConfig(read(TRACING_OPTIONS)),
    webhooks: read(WEBHOOK_OPTIONS),
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
