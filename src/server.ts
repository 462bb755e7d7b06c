import closeWithGrace from 'close-with-grace'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp, startWebhookWorker } from './app.ts'
import { type Config, checkServeConfig } from './config/config.ts'
import { type DatabaseHandle, databaseTimeouts, openDatabase, poolerSettings } from './db/database.ts'
import { migrateAtStart } from './db/migrate.ts'
import { EventsRetention } from './events/events-retention.ts'
import { shutDown } from './http/shutdown.ts'
import { takeConnectionsFromPrimary } from './http/worker-connections.ts'
import { purgeExpiredIdempotencyKeys } from './idempotency/idempotency.ts'
import { onStopSignals } from './lib/stop-signals.ts'
import { answerClusterMetrics, listenForMetrics, type MetricsServer } from './observability/metrics-server.ts'
import { startTracing } from './observability/tracing.ts'
import { importLegacyImages, type LegacyImport, legacyUploadDir } from './pets/legacy-images-import.ts'
import { purgeRequestLogsBefore } from './request-logs/request-logs-service.ts'
import { purgeFinishedDeliveriesBefore } from './webhooks/webhooks-service.ts'

/** A worker of `serve --workers N` (src/admin-cli/workers.ts): what it does and leaves alone. */
export interface WorkerRole {
  /** 1..N; a replacement takes the slot of the worker it replaces. */
  slot: number
  /**
   * Runs the webhooks worker and the periodic purges. On SQLite one worker does (the webhook
   * claims rely on one claimer per file); on PostgreSQL every worker, like any instance.
   */
  backgroundJobs: boolean
}

/**
 * Starts the service: opens and migrates the database, builds the app, listens, and on
 * SIGTERM/SIGINT stops as src/http/shutdown.ts describes: not ready at once, serving for
 * SHUTDOWN_DRAIN_SECONDS, then in-flight requests get SHUTDOWN_GRACE_SECONDS before the exit.
 * As a worker of a cluster (`role`), the primary has prepared the database and serves the
 * metrics, and only its SIGTERM stops the worker.
 */
export async function startServer(config: Config, role?: WorkerRole): Promise<FastifyInstance> {
  checkServeConfig(config)
  const tracing = await startTracing(config.tracing)
  const tracer = tracing === null ? {} : { tracer: tracing.tracer }
  let log: FastifyBaseLogger | undefined
  const timeouts = databaseTimeouts(config)
  const database = openDatabase(config.databaseUrl, {
    ...tracer,
    backgroundTraceRatio: config.tracing.backgroundRatio ?? 0,
    timeouts,
    poolSize: config.dbPoolSize,
    backgroundPoolSize: config.dbBackgroundPoolSize,
    pooler: poolerSettings(config),
    // A connection lost outside any request: the pool replaces it; say so, and carry on.
    onConnectionError: (error) => log?.warn({ err: { message: error.message } }, 'database connection lost'),
    onWarning: (message) => log?.warn(message),
  })
  const legacyImages = role === undefined ? await prepare(database, config) : undefined
  const server = await buildApp({ config, database, ...tracer })
  log = server.log
  if (legacyImages !== undefined) logLegacyImages(server.log, legacyImages)
  const jobs = role?.backgroundJobs === false ? undefined : startBackgroundJobs(server, database, config)
  server.addHook('onClose', async () => {
    // The webhooks worker's last writes, and the request log entries still buffered, need the
    // database (onClose hooks run last registered first: this one before the app's own).
    await server.deps.requestLogs.close()
    await jobs?.stop()
    await database.close()
    await tracing?.shutdown()
  })

  // Before the signal handlers: a start that fails here must exit non-zero, not as a shutdown.
  const metrics = role === undefined ? await startMetricsListener(server, config) : undefined
  if (role !== undefined && server.metrics !== undefined) answerClusterMetrics(server.metrics)

  const drainMs = config.shutdownDrainSeconds * 1000
  if (role !== undefined) {
    // A terminal's Ctrl-C reaches the whole process group; the primary turns it into one
    // SIGTERM per worker, and a second signal here would cut the drain short.
    process.on('SIGINT', () => {})
  }
  let stopSignal: NodeJS.Signals | undefined
  const graceful = closeWithGrace(
    // SIGTERM and SIGINT are ours (below); closeWithGrace keeps the other signals, uncaught
    // errors and the deadline.
    { delay: drainMs + config.shutdownGraceSeconds * 1000, skip: ['SIGTERM', 'SIGINT'] },
    async ({ err }) => {
      if (err !== undefined) {
        // A bug, not a request to stop: no draining.
        server.log.error({ err }, 'shutting down after an uncaught error')
        await shutDown(server, 0)
        return
      }
      server.log.info(
        { signal: stopSignal, drain_seconds: config.shutdownDrainSeconds },
        'shutting down: not ready, draining',
      )
      await shutDown(server, drainMs)
    },
  )
  // A Ctrl-C under `npm start` (SIGINT, and npm's signal) is one request to drain, not a drain
  // and an exit at once (src/lib/stop-signals.ts); a signal repeated later stops the process
  // without waiting.
  const uninstallSignals = onStopSignals(role === undefined ? ['SIGTERM', 'SIGINT'] : ['SIGTERM'], {
    stop(signal) {
      stopSignal = signal
      void graceful.close()
    },
    force(signal) {
      server.log.error(
        { signal },
        'asked again to stop: exiting now, without finishing the requests in flight',
      )
      process.exit(1)
    },
  })

  try {
    if (role === undefined) await server.listen({ port: config.port, host: config.host })
    else await takeConnections(server)
  } catch (error) {
    // Asked to stop while starting (a worker, say): the stop under way ends the process cleanly.
    if (server.deps.shutdown.started) return server
    // Nothing else would end the process (the database, the jobs and the handlers keep it up).
    graceful.uninstall()
    uninstallSignals()
    await server.close()
    throw listenError(config, error)
  }
  server.log.info(
    {
      database: database.location,
      dialect: database.dialect,
      metrics: role === undefined ? (metrics?.url ?? 'off') : 'primary',
      tracing: tracing === null ? 'off' : 'on',
      ...(role === undefined ? {} : { worker: role.slot, background_jobs: role.backgroundJobs }),
    },
    'pet-service ready',
  )
  return server
}

/** A worker's connections: those its primary hands over, until the worker asks for no more. */
async function takeConnections(server: FastifyInstance): Promise<void> {
  await server.ready()
  const { shutdown } = server.deps
  // Asked to stop while starting: the stop under way asks for nothing, and ends the worker.
  if (!shutdown.started) shutdown.closeListener = takeConnectionsFromPrimary(server.server)
}

/** Why the API port could not be opened, and what to change. */
export function listenError(config: Config, error: unknown): Error {
  const where = `${config.host}:${config.port}`
  if ((error as { code?: string }).code === 'EADDRINUSE') {
    return new Error(
      `${where} is already in use: stop the program that holds it, or set PORT to a free port.`,
    )
  }
  const reason = error instanceof Error ? error.message : String(error)
  return new Error(
    `The service could not listen on ${where} (${reason}); set PORT and HOST to an address it may listen on.`,
  )
}

/**
 * What a cluster's primary does once before forking (migrations, the legacy-image import), so
 * that workers never race each other for them.
 */
export async function prepareDatabase(config: Config, log: (message: string) => void): Promise<void> {
  checkServeConfig(config)
  const timeouts = databaseTimeouts(config)
  const database = openDatabase(config.databaseUrl, { timeouts, pooler: poolerSettings(config) })
  try {
    const images = await prepare(database, config)
    if (images.imported + images.discarded > 0) {
      log(`moved ${images.imported} uploaded images from the data folder into the database`)
    }
  } finally {
    await database.close()
  }
}

async function prepare(database: DatabaseHandle, config: Config): Promise<LegacyImport> {
  await migrateAtStart(database, config.databaseUrl, { timeouts: databaseTimeouts(config) })
  return importLegacyImages(database.db, legacyUploadDir(config.databaseUrl))
}

function logLegacyImages(log: FastifyBaseLogger, images: LegacyImport): void {
  if (images.imported + images.discarded > 0) {
    log.info(images, 'moved uploaded images from the data folder into the database')
  }
}

/**
 * The webhooks worker, the idempotency-key purge and the events retention purge, on the
 * database's background connections (DB_BACKGROUND_POOL_SIZE): requests that take every
 * connection of the main pool cannot stop them.
 */
function startBackgroundJobs(
  server: FastifyInstance,
  database: DatabaseHandle,
  config: Config,
): { stop(): Promise<void> } {
  const webhookWorker = startWebhookWorker(server, database)

  const purge = setInterval(
    () => {
      purgeExpiredIdempotencyKeys(database.background).catch((error: unknown) =>
        server.log.warn({ err: error }, 'idempotency purge failed'),
      )
    },
    60 * 60 * 1000,
  )
  purge.unref()
  const retention = new EventsRetention(database.background, {
    days: config.eventsRetentionDays,
    batch: 1000,
    maxBatchesPerRun: 100,
    intervalMs: 10 * 60 * 1000,
    onError: (error) => server.log.warn({ err: error }, 'events retention purge failed'),
    alongside: [purgeFinishedDeliveriesBefore],
    others: [{ days: config.requestLogRetentionDays, purgeBefore: purgeRequestLogsBefore }],
  })
  retention.start()
  return {
    async stop() {
      clearInterval(purge)
      await Promise.all([webhookWorker.stop(), retention.stop()])
    },
  }
}

/** The Prometheus listener, unless METRICS_PORT=0; a port already taken stops the start. */
async function startMetricsListener(
  app: FastifyInstance,
  config: Config,
): Promise<MetricsServer | undefined> {
  if (app.metrics === undefined) return undefined
  try {
    const metrics = await listenForMetrics(app.metrics, {
      host: config.metricsHost,
      port: config.metricsPort,
    })
    app.addHook('onClose', () => metrics.close())
    return metrics
  } catch (error) {
    await app.close()
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(
      `The metrics listener could not start on ${config.metricsHost}:${config.metricsPort} (${reason}). Set METRICS_PORT to a free port, or to 0 to turn metrics off.`,
    )
  }
}
