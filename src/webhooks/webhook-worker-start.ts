import type { FastifyInstance } from 'fastify'
import type { DatabaseHandle } from '../db/database.ts'
import { DeliveryWorker } from './delivery-worker.ts'

/**
 * Starts the webhooks worker. The caller stops it (`stop()`: no more claims, the sends under
 * way finish, each cut at the timeout) when the app closes, before closing the database.
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
    db: database.db,
    box: webhooks.box,
    clock: webhooks.clock,
    resolve: webhooks.resolve,
    insecure: webhooks.insecure,
    timeoutMs: config.webhooks.timeoutSeconds * 1000,
    concurrencyPerEndpoint: config.webhooks.concurrencyPerEndpoint,
    disableAfterDays: config.webhooks.disableAfterDays,
    // PostgreSQL transactions may commit out of seq order; a minute covers any transaction the
    // statement and lock timeouts let live. SQLite commits one at a time.
    gapGraceMs: database.dialect === 'postgres' ? 60_000 : 0,
    log: app.log.child({ component: 'webhooks' }),
    requestsReceived: () => received,
  })
  worker.start()
  return worker
}
