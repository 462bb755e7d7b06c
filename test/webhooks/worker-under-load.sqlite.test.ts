import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CpuShare } from '../../src/webhooks/cpu-share.ts'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { manualClock, startReceiver } from './receiver.ts'

/** Keeps the event loop about 90 % busy, as a request load that saturates the process does. */
function saturateLoop(): () => void {
  const timer = setInterval(() => {
    const until = performance.now() + 9
    while (performance.now() < until) {}
  }, 10)
  return () => clearInterval(timer)
}

describeDb('the webhooks worker while requests saturate the process', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })
  })
  afterAll(async () => t.close())

  it('leaves the event loop to the requests while it holds back a fan-out backlog', async () => {
    const receiver = await startReceiver(() => 200)
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const created = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: JSON.stringify({ url: receiver.url, enabled_events: ['*'] }),
      headers: { 'content-type': 'application/json' },
    })
    expect(created.statusCode).toBe(201)
    // More events than one fan-out round calls a backlog (500), so the first round reports one.
    for (let i = 0; i < 600; i++) {
      const pet = await call({ method: 'POST', url: '/v1/pet', ...form({ name: `Pet ${i}` }) })
      expect(pet.statusCode).toBe(201)
    }
    let received = 0
    const stopLoad = saturateLoop()
    const arrivals = setInterval(() => received++, 5)
    const windowMs = 200
    const worker = new DeliveryWorker({
      db: t.database.db,
      box: t.app.deps.webhooks.box,
      clock: manualClock(),
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      insecure: true,
      timeoutMs: 2_000,
      concurrencyPerEndpoint: 4,
      concurrencyPerAccount: 8,
      disableAfterDays: 5,
      log: t.app.log,
      pollMs: windowMs,
      // At a trickle from the start, as after the first windows of a saturating load.
      cpuShare: new CpuShare({ windowMs, requests: () => received, initial: 2 }),
    })
    try {
      worker.start()
      await new Promise((resolve) => setTimeout(resolve, 300))
      const lag = monitorEventLoopDelay({ resolution: 5 })
      lag.enable()
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      lag.disable()
      // The load alone delays timers by about 10 ms. A worker that spun on the backlog it was
      // holding back (each turn an already-settled promise) kept the loop for whole windows:
      // timers waited about half a window on average.
      expect(lag.mean / 1e6).toBeLessThan(60)
    } finally {
      clearInterval(arrivals)
      stopLoad()
      await worker.stop()
      await receiver.close()
    }
  })
})
