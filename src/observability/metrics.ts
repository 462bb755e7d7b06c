import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { DatabaseHandle } from '../db/database.ts'
import type { SharedRedis } from '../http/shared-redis.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus metrics; absent when METRICS_PORT=0. */
    metrics?: Registry
  }
}

/** Latency buckets in seconds: from a cached read to a request near its timeout. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Transactions per shared SQLite commit (src/db/sqlite-group-commit.ts caps a batch at 256). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
/** Requests the router matched no route for share one label: raw URLs would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * The app's Prometheus metrics, in a registry of its own (several apps may live in one process:
 * tests build many). Requests are labelled by method, route *pattern* and status; process
 * figures (heap, event-loop lag) are kept once per process (process-metrics.ts) and served
 * beside these by the metrics listener (metrics-server.ts), never on the API's port.
 */
export function registerMetrics(app: FastifyInstance, database: DatabaseHandle): Registry {
  const registry = new Registry()
  registerRequestMetrics(app, registry)
  registerDatabaseMetrics(app, registry, database)
  app.decorate('metrics', registry)
  return registry
}

function registerRequestMetrics(app: FastifyInstance, registry: Registry): void {
  // prom-client checks and hashes the labels on every inc() and observe(), a cost paid per
  // request: requests are counted per label set in our own map, and handed to the counter
  // when Prometheus scrapes. The histogram is fed as requests finish, its labels object reused.
  interface Series {
    labels: { method: string; route: string; status_code: number }
    count: number
    reported: number
  }
  const series = new Map<string, Series>()
  const labelNames = ['method', 'route', 'status_code'] as const
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames,
    registers: [registry],
    collect() {
      for (const s of series.values()) {
        if (s.count === s.reported) continue
        this.inc(s.labels, s.count - s.reported)
        s.reported = s.count
      }
    },
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route pattern and status code.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  let inFlight = 0
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received and not yet answered.',
    registers: [registry],
    collect() {
      this.set(inFlight)
    },
  })

  const aborted = new Counter({
    name: 'http_requests_aborted_total',
    help: 'Requests whose client went away before the response was sent (they have no status), by method and route pattern.',
    labelNames: ['method', 'route'],
    registers: [registry],
  })

  // A request is counted out once: when its response finishes, or when its client goes away
  // first (Fastify then never runs onResponse).
  const abandoned = new WeakSet<FastifyRequest>()
  app.addHook('onRequest', (_request, _reply, done) => {
    inFlight++
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    abandoned.add(request)
    inFlight--
    aborted.inc({ method: request.method, route: request.routeOptions.url ?? UNMATCHED_ROUTE })
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    if (!abandoned.has(request)) inFlight--
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const key = `${request.method} ${reply.statusCode} ${route}`
    let found = series.get(key)
    if (found === undefined) {
      found = {
        labels: { method: request.method, route, status_code: reply.statusCode },
        count: 0,
        reported: 0,
      }
      series.set(key, found)
    }
    found.count++
    duration.observe(found.labels, reply.elapsedTime / 1000)
    done()
  })
}

function registerDatabaseMetrics(app: FastifyInstance, registry: Registry, database: DatabaseHandle): void {
  // Named after OpenTelemetry's database client metrics (db.client.connection.*); `pool` is its
  // pool name: the requests' pool, and the background work's (DB_BACKGROUND_POOL_SIZE).
  const pools = [
    ...(database.pool === undefined ? [] : [{ name: 'requests', pool: database.pool }]),
    ...(database.backgroundPool === undefined ? [] : [{ name: 'background', pool: database.backgroundPool }]),
  ]
  if (pools.length > 0) {
    new Gauge({
      name: 'db_client_connections',
      help: 'PostgreSQL pool connections, by pool (requests or background) and state (idle or used).',
      labelNames: ['pool', 'state'],
      registers: [registry],
      collect() {
        for (const { name, pool } of pools) {
          this.set({ pool: name, state: 'idle' }, pool.idleCount)
          this.set({ pool: name, state: 'used' }, pool.totalCount - pool.idleCount)
        }
      },
    })
    new Gauge({
      name: 'db_client_connections_max',
      help: 'Largest number of connections each PostgreSQL pool opens, by pool (requests or background).',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        for (const { name, pool } of pools) this.set({ pool: name }, pool.options.max)
      },
    })
  }
  const monitor = database.groupCommit
  new Gauge({
    name: 'db_client_connection_pending_requests',
    help: 'Queries or transactions waiting for a connection (PostgreSQL, by pool) or for the SQLite writer.',
    labelNames: ['pool'],
    registers: [registry],
    collect() {
      if (pools.length === 0) this.set(monitor?.waiting() ?? 0)
      for (const { name, pool } of pools) this.set({ pool: name }, pool.waitingCount)
    },
  })
  if (monitor === undefined) return
  const batch = new Histogram({
    name: 'sqlite_group_commit_transactions',
    help: 'Transactions (and lone writes) carried by each shared SQLite commit.',
    buckets: BATCH_BUCKETS,
    registers: [registry],
  })
  const commitTime = new Histogram({
    name: 'sqlite_group_commit_duration_seconds',
    help: 'Time each shared SQLite commit took.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  })
  const failed = new Counter({
    name: 'sqlite_group_commit_failures_total',
    help: 'Shared SQLite commits that failed (every transaction in them failed).',
    registers: [registry],
  })
  const unsubscribe = monitor.subscribe((report) => {
    batch.observe(report.transactions)
    commitTime.observe(report.seconds)
    if (!report.ok) failed.inc()
  })
  app.addHook('onClose', async () => {
    unsubscribe()
  })
}

/**
 * Redis, which the rate limits share between instances: whether it answers, how often it stopped,
 * and the limit decisions an instance made alone meanwhile (each instance then allows the full
 * rate by itself).
 */
export function registerRedisMetrics(registry: Registry, redis: SharedRedis): void {
  new Gauge({
    name: 'redis_answering',
    help: 'Whether Redis answers (1), or the rate limits use their per-instance fallback (0).',
    registers: [registry],
    collect() {
      this.set(redis.answering ? 1 : 0)
    },
  })
  // Counted by SharedRedis as they happen, handed to the counters when Prometheus scrapes.
  let outages = 0
  new Counter({
    name: 'redis_outages_total',
    help: 'Times Redis stopped answering (a command timed out, or the connection closed or failed to open).',
    registers: [registry],
    collect() {
      this.inc(redis.outages - outages)
      outages = redis.outages
    },
  })
  let fallbacks = 0
  new Counter({
    name: 'rate_limit_redis_fallbacks_total',
    help: 'Rate-limit decisions this instance made alone, with its per-instance fallback, because Redis did not answer.',
    registers: [registry],
    collect() {
      this.inc(redis.fallbacks - fallbacks)
      fallbacks = redis.fallbacks
    },
  })
}
