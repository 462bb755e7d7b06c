import { isAbsolute, resolve } from 'node:path'

/**
 * Every setting the service reads from its environment, with its default and meaning.
 * `.env.example` and the README's configuration table list the same options; a test keeps
 * them in step with `CONFIG_OPTIONS`.
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
  trustProxy: boolean
  /** Seconds to let in-flight requests finish after SIGTERM before the process exits anyway. */
  shutdownGraceSeconds: number
  /** Public origin: the OAuth issuer, and links. Required to serve on PostgreSQL (checkServeConfig). */
  publicUrl: string | undefined
  /** Total bytes of uploaded images an account may keep (0: no uploads). */
  imageQuotaBytes: number
  /** Port of the Prometheus `/metrics` listener; 0 turns metrics off. */
  metricsPort: number
  /** Interface of the metrics listener: loopback unless an operator opens it. */
  metricsHost: string
  tracing: TracingConfig
}

/**
 * OpenTelemetry tracing, by the standard `OTEL_*` variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). It is on
 * when an exporter or an OTLP endpoint is named and the SDK is not disabled; the SDK itself reads
 * every other `OTEL_*` variable (headers, sampler, resource attributes, timeouts).
 */
export interface TracingConfig {
  enabled: boolean
  serviceName: string
}

const TRACES_EXPORTERS = ['otlp', 'console', 'zipkin', 'none'] as const
const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const

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
    description: 'Set `true` behind a reverse proxy so client addresses come from `X-Forwarded-For`.',
  },
  {
    env: 'SHUTDOWN_GRACE_SECONDS',
    default: '10',
    description: 'Time given to in-flight requests after SIGTERM/SIGINT before the process exits.',
  },
  {
    env: 'PUBLIC_URL',
    default: undefined,
    description:
      'Public base URL of the service (e.g. `https://pets.example.com`), used in links and as the OAuth issuer. Required to serve on PostgreSQL (the same on every instance); `http://localhost:PORT` when unset on SQLite.',
  },
  {
    env: 'IMAGE_QUOTA_BYTES',
    default: '104857600',
    description:
      'Total size of the uploaded pet images an account may keep (100 MiB; `0` refuses uploads). Each image is at most 10 MiB.',
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
  const boolean = (name: string): boolean => {
    const raw = read(name).toLowerCase()
    if (['true', '1', 'yes'].includes(raw)) return true
    if (['false', '0', 'no'].includes(raw)) return false
    problems.push(`${name}=${JSON.stringify(raw)} must be true or false.`)
    return false
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
  const tracing = readTracing(env, problems)

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
    trustProxy: boolean('TRUST_PROXY'),
    shutdownGraceSeconds: integer('SHUTDOWN_GRACE_SECONDS', 0, 600),
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    imageQuotaBytes: integer('IMAGE_QUOTA_BYTES', 0, 2 ** 50),
    metricsPort: integer('METRICS_PORT', 0, 65535),
    metricsHost,
    tracing,
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
  const exporting = exporters.length > 0 ? !exporters.includes('none') : endpoint
  return {
    enabled: disabled !== 'true' && exporting,
    serviceName: value('OTEL_SERVICE_NAME') ?? 'pet-service',
  }
}

/** Resolves the file behind a `sqlite:` URL against the working directory. */
export function sqlitePath(databaseUrl: string, cwd = process.cwd()): string {
  const path = databaseUrl.replace(/^sqlite:(\/\/)?/, '')
  if (path === ':memory:') return path
  return isAbsolute(path) ? path : resolve(cwd, path)
}
