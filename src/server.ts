import closeWithGrace from 'close-with-grace'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import type { Config } from './config/config.ts'
import { databaseTimeouts, openDatabase } from './db/database.ts'
import { migrateAtStart } from './db/migrate.ts'
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts'
import { shutDown } from './http/shutdown.ts'

/**
 * Starts the service: opens and migrates the database, builds the app, listens, and on
 * SIGTERM/SIGINT stops as src/http/shutdown.ts describes: not ready at once, serving for
 * SHUTDOWN_DRAIN_SECONDS, then in-flight requests get SHUTDOWN_GRACE_SECONDS before the exit.
 */
export async function startServer(config: Config): Promise<FastifyInstance> {
  let log: FastifyBaseLogger | undefined
  const timeouts = databaseTimeouts(config)
  const database = openDatabase(config.databaseUrl, {
    timeouts,
    // A connection lost outside any request: the pool replaces it; say so, and carry on.
    onConnectionError: (error) => log?.warn({ err: { message: error.message } }, 'database connection lost'),
  })
  await migrateAtStart(database, config.databaseUrl, { timeouts })
  const server = await buildApp({ config, database })
  log = server.log
  server.addHook('onClose', async () => {
    await database.close()
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
  server.log.info({ database: database.location, dialect: database.dialect }, 'pet-service ready')
  return server
}
