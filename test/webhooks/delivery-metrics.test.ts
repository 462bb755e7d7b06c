import { Registry } from 'prom-client'
import { expect, it } from 'vitest'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { registerWebhookMetrics } from '../../src/webhooks/webhook-metrics.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { parsePrometheus, sampleValue } from '../observability/prometheus-text.ts'
import { manualClock, startReceiver } from './receiver.ts'

const MINUTE = 60_000

describeDb('webhook metrics', () => {
  const t = useTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })

  it('counts deliveries by outcome, with their answer times, their lag from the event, and the backlog', async () => {
    const clock = manualClock()
    const registry = new Registry()
    const observer = registerWebhookMetrics(registry, t.database.db, clock)
    const metrics = async () => parsePrometheus(await registry.metrics())
    const ok = await startReceiver(() => 200)
    const broken = await startReceiver(() => 503)
    try {
      const { accountId, apiKey } = await t.newAccount()
      const call = withKey(t.app, apiKey)
      for (const url of [ok.url, broken.url]) {
        const created = await call({
          method: 'POST',
          url: '/v1/webhook_endpoint',
          payload: JSON.stringify({ url, enabled_events: ['pet.created'] }),
          headers: { 'content-type': 'application/json' },
        })
        expect(created.statusCode).toBe(201)
      }
      for (const name of ['One', 'Two', 'Three']) {
        expect((await call({ method: 'POST', url: '/v1/pet', ...form({ name }) })).statusCode).toBe(201)
      }
      const waiting = await metrics()
      expect(sampleValue(waiting, 'webhook_events_waiting_fan_out')).toBeGreaterThanOrEqual(3)
      expect(sampleValue(waiting, 'webhook_deliveries_total', { outcome: 'succeeded' })).toBe(0)

      const worker = new DeliveryWorker({
        db: t.database.db,
        box: t.app.deps.webhooks.box,
        clock,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        insecure: true,
        timeoutMs: 2_000,
        concurrencyPerEndpoint: 4,
        concurrencyPerAccount: 8,
        disableAfterDays: 5,
        log: t.app.log,
        random: () => 0.5,
        observer,
      })
      // Delivered 2 minutes (of the worker's clock) after the events.
      clock.advance(2 * MINUTE)
      await worker.runOnce()
      const sent = await metrics()
      expect(sampleValue(sent, 'webhook_deliveries_total', { outcome: 'succeeded' })).toBe(3)
      expect(sampleValue(sent, 'webhook_deliveries_total', { outcome: 'retrying' })).toBe(3)
      expect(sampleValue(sent, 'webhook_delivery_duration_seconds_count')).toBe(6)
      expect(sampleValue(sent, 'webhook_delivery_lag_seconds_count')).toBe(3)
      expect(sampleValue(sent, 'webhook_delivery_lag_seconds_bucket', { le: '60' })).toBe(0)
      expect(sampleValue(sent, 'webhook_delivery_lag_seconds_bucket', { le: '300' })).toBe(3)
      // The three retries wait, due in 30 s: open, none due yet, every event fanned out.
      expect(sampleValue(sent, 'webhook_deliveries_open')).toBe(3)
      expect(sampleValue(sent, 'webhook_delivery_oldest_due_seconds')).toBe(0)
      expect(sampleValue(sent, 'webhook_events_waiting_fan_out')).toBe(0)

      clock.advance(MINUTE + 1_000)
      const overdue = await metrics()
      expect(sampleValue(overdue, 'webhook_delivery_oldest_due_seconds')).toBeGreaterThanOrEqual(30)

      // Retried for 3 days of the worker's clock, then given up.
      for (let i = 0; i < 30; i++) {
        clock.advance(12 * 60 * MINUTE)
        await worker.runOnce()
      }
      const done = await metrics()
      const logged = await t.database.db
        .selectFrom('webhook_attempts')
        .select('status')
        .where('account_id', '=', accountId)
        .execute()
      const count = (status: string) => logged.filter((a) => a.status === status).length
      expect(count('failed')).toBe(3)
      for (const outcome of ['succeeded', 'retrying', 'failed']) {
        expect(sampleValue(done, 'webhook_deliveries_total', { outcome }), outcome).toBe(count(outcome))
      }
      expect(sampleValue(done, 'webhook_delivery_duration_seconds_count')).toBe(logged.length)
      expect(sampleValue(done, 'webhook_deliveries_open')).toBe(0)
    } finally {
      await ok.close()
      await broken.close()
    }
  })
})
