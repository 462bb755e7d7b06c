import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { type Config, checkServeConfig } from './config/config.ts'
import { openDatabase } from './db/database.ts'
import { migrateToLatest } from './db/migrate.ts'
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts'
import { importLegacyImages, legacyUploadDir } from './pets/legacy-images-import.ts'

/**
 * Starts the service: opens and migrates the database, builds the app, listens, and on
 * SIGTERM/SIGINT stops taking connections, lets in-flight requests finish, then closes the
 * database.
 */
export async function startServer(config: Config): Promise<FastifyInstance> {
  checkServeConfig(config)
  const database = openDatabase(config.databaseUrl)
  await migrateToLatest(database.db)
  const legacyImages = await importLegacyImages(database.db, legacyUploadDir(config.databaseUrl))
  const app = await buildApp({ config, database })
  if (legacyImages.imported + legacyImages.discarded > 0) {
    app.log.info(legacyImages, 'moved uploaded images from the data folder into the database')
  }
  app.addHook('onClose', async () => {
    await database.close()
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

  closeWithGrace({ delay: config.shutdownGraceSeconds * 1000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    app.deps.shuttingDown.value = true
    await app.close()
  })

  await app.listen({ port: config.port, host: config.host })
  app.log.info({ database: database.location, dialect: database.dialect }, 'pet-service ready')
  return app
}
