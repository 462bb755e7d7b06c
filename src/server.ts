import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { type Config, checkServeConfig } from './config/config.ts'
import { openDatabase } from './db/database.ts'
import { migrateToLatest } from './db/migrate.ts'
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts'
import { listenForMetrics, type MetricsServer } from './observability/metrics-server.ts'
import { startTracing } from './observability/tracing.ts'
import { importLegacyImages, legacyUploadDir } from './pets/legacy-images-import.ts'

/**
 * Starts the service: opens and migrates the database, builds the app, listens, and on
 * SIGTERM/SIGINT stops taking connections, lets in-flight requests finish, then closes the
 * database.
 */
export async function startServer(config: Config): Promise<FastifyInstance> {
  checkServeConfig(config)
  const tracing = await startTracing(config.tracing)
  const tracer = tracing === null ? {} : { tracer: tracing.tracer }
  const database = openDatabase(config.databaseUrl, tracer)
  await migrateToLatest(database.db)
  const legacyImages = await importLegacyImages(database.db, legacyUploadDir(config.databaseUrl))
  const app = await buildApp({ config, database, ...tracer })
  if (legacyImages.imported + legacyImages.discarded > 0) {
    app.log.info(legacyImages, 'moved uploaded images from the data folder into the database')
  }
  app.addHook('onClose', async () => {
    await database.close()
    await tracing?.shutdown()
  })

  const purge = setInterval(
    () => {
      purgeExpiredIdempotencyKeys(database.db).catch((error: unknown) =>
        app.log.warn({ err: error }, 'idempotency purge failed'),
      )
    },
    60 * 60 * 1000,
  )
  purge.unref()
  app.addHook('onClose', async () => clearInterval(purge))

  // Before the signal handlers: a start that fails here must exit non-zero, not as a shutdown.
  const metrics = await startMetricsListener(app, config)

  closeWithGrace({ delay: config.shutdownGraceSeconds * 1000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    app.deps.shuttingDown.value = true
    await app.close()
  })

  await app.listen({ port: config.port, host: config.host })
  app.log.info(
    {
      database: database.location,
      dialect: database.dialect,
      metrics: metrics?.url ?? 'off',
      tracing: tracing === null ? 'off' : 'on',
    },
    'pet-service ready',
  )
  return app
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
