import { expect, it } from 'vitest'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { eventLeftOpen } from '../helpers/late-commit.ts'
import { manualClock, startReceiver } from './receiver.ts'

const MINUTE = 60_000

// The fan-out follows the events by seq; on PostgreSQL an event committed after a later one
// appears below the point the fan-out has reached.
describeDb('webhooks fan-out while an event commits after a later one (PostgreSQL)', () => {
  const clock = manualClock()

  const t = useTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })

  it('delivers an event whose transaction commits after a later one, however late', async () => {
    const receiver = await startReceiver(() => 200)
    try {
      const { accountId, apiKey } = await t.newAccount()
      const call = withKey(t.app, apiKey)
      const created = await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        payload: JSON.stringify({ url: receiver.url, enabled_events: ['*'] }),
        headers: { 'content-type': 'application/json' },
      })
      expect(created.statusCode).toBe(201)
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
      })
      const late = await eventLeftOpen(t.database.db, accountId, 'late')
      const later = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Later' }) })
      expect(later.statusCode).toBe(201)
      await worker.runOnce()
      expect(receiver.received).toHaveLength(1)
      // Longer than any transaction the service's own timeouts let live.
      clock.advance(10 * MINUTE)
      await worker.runOnce()
      await late.commit()
      await worker.runOnce()
      expect(receiver.received.map((r) => String(r.headers['webhook-id']))).toContain(late.id)
      expect(receiver.received).toHaveLength(2)
    } finally {
      await receiver.close()
    }
  })
})
