import type { FastifyInstance } from 'fastify'
import type { DatabaseHandle } from '../db/database.ts'
import { DeliveryWorker } from './delivery-worker.ts'
import { registerWebhookMetrics } from './webhook-metrics.ts'

/**
 * Starts the webhooks worker once the app is ready. The caller stops it (`stop()`: no more
 * claims, the sends under way finish, each cut at the timeout) when the app closes, before
 * closing the database.
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
    // Its own connections on PostgreSQL (see DatabaseHandle.background): a floor of progress
    // however many requests wait for the main pool.
    db: database.background,
    box: webhooks.box,
    clock: webhooks.clock,
    resolve: webhooks.resolve,
    insecure: webhooks.insecure,
    timeoutMs: config.webhooks.timeoutSeconds * 1000,
    concurrencyPerEndpoint: config.webhooks.concurrencyPerEndpoint,
    concurrencyPerAccount: config.webhooks.concurrencyPerAccount,
    disableAfterDays: config.webhooks.disableAfterDays,
    log: app.log.child({ component: 'webhooks' }),
    requestsReceived: () => received,
    ...(app.metrics === undefined
      ? {}
      : { observer: registerWebhookMetrics(app.metrics, database.background, webhooks.clock) }),
  })
  // Not before: its first round opens a connection of the background pool, and the boot's own
  // work could hold the event loop past DB_CONNECT_TIMEOUT_SECONDS while that connection opens.
  app.addHook('onReady', async () => worker.start())
  return worker
}
