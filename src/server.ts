import closeWithGrace from 'close-with-grace'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { type Config, checkServeConfig } from './config/config.ts'
import { databaseTimeouts, openDatabase } from './db/database.ts'
import { migrateAtStart } from './db/migrate.ts'
import { shutDown } from './http/shutdown.ts'
import { purgeExpiredIdempotencyKeys } from './idempotency/idempotency.ts'
import { listenForMetrics, type MetricsServer } from './observability/metrics-server.ts'
import { startTracing } from './observability/tracing.ts'
import { importLegacyImages, legacyUploadDir } from './pets/legacy-images-import.ts'
import { startWebhookWorker } from './webhooks/webhook-worker-start.ts'

/**
 * Starts the service: opens and migrates the database, builds the app, listens, and on
 * SIGTERM/SIGINT stops as src/http/shutdown.ts describes: not ready at once, serving for
 * SHUTDOWN_DRAIN_SECONDS, then in-flight requests get SHUTDOWN_GRACE_SECONDS before the exit.
 */
export async function startServer(config: Config): Promise<FastifyInstance> {
  checkServeConfig(config)
  const tracing = await startTracing(config.tracing)
  const tracer = tracing === null ? {} : { tracer: tracing.tracer }
  let log: FastifyBaseLogger | undefined
  const timeouts = databaseTimeouts(config)
  const database = openDatabase(config.databaseUrl, {
    ...tracer,
    timeouts,
    // A connection lost outside any request: the pool replaces it; say so, and carry on.
    onConnectionError: (error) => log?.warn({ err: { message: error.message } }, 'database connection lost'),
  })
  await migrateAtStart(database, config.databaseUrl, { timeouts })
  const legacyImages = await importLegacyImages(database.db, legacyUploadDir(config.databaseUrl))
  const server = await buildApp({ config, database, ...tracer })
  log = server.log
  if (legacyImages.imported + legacyImages.discarded > 0) {
    server.log.info(legacyImages, 'moved uploaded images from the data folder into the database')
  }
  const webhookWorker = startWebhookWorker(server, database)
  server.addHook('onClose', async () => {
    // The worker's last writes need the database.
    await webhookWorker.stop()
    await database.close()
    await tracing?.shutdown()
  })

  const purge = setInterval(
    () => {
      purgeExpiredIdempotencyKeys(database.db).catch((error: unknown) =>
        server.log.warn({ err: error }, 'idempotency purge failed'),
      )
    },
    60 * 60 * 1000,
  )
  purge.unref()
  server.addHook('onClose', async () => clearInterval(purge))

  // Before the signal handlers: a start that fails here must exit non-zero, not as a shutdown.
  const metrics = await startMetricsListener(server, config)

  const drainMs = config.shutdownDrainSeconds * 1000
  closeWithGrace({ delay: drainMs + config.shutdownGraceSeconds * 1000 }, async ({ signal, err }) => {
    if (err !== undefined) {
      // A bug, not a request to stop: no draining.
      server.log.error({ err }, 'shutting down after an uncaught error')
      await shutDown(server, 0)
      return
    }
    server.log.info(
      { signal, drain_seconds: config.shutdownDrainSeconds },
      'shutting down: not ready, draining',
    )
    await shutDown(server, drainMs)
  })

  await server.listen({ port: config.port, host: config.host })
  server.log.info(
    {
      database: database.location,
      dialect: database.dialect,
      metrics: metrics?.url ?? 'off',
      tracing: tracing === null ? 'off' : 'on',
    },
    'pet-service ready',
  )
  return server
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
