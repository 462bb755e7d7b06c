import { afterEach, expect, it } from 'vitest'
import { waitForEvery } from './acceptance.ts'
import { startReceiver } from './receiver.ts'

/**
 * The acceptance tests' receiver runs in the test process, beside the loop that waits for every
 * event to arrive: that wait must leave the receiver free to answer within the sender's timeout
 * (2 s in WEBHOOK_SERVER_ENV), or the service sees timeouts, retries on its 30 s / 2 min backoff,
 * and the test reports events as never delivered.
 */
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})

it('answers deliveries within the sender timeout while the acceptance check waits on 10,000 events', async () => {
  receiver = await startReceiver()
  const wanted = Array.from({ length: 10_000 }, (_, n) => `evt_${n}`)
  // 9,999 of them already in, as after a long run (recorded directly: sending them is not the point).
  for (const id of wanted.slice(0, -1)) {
    receiver.received.push({ headers: { 'webhook-id': id }, body: '{}' })
    receiver.ids.add(id)
  }
  const waiting = waitForEvery(wanted, receiver, 30_000)
  const last = await fetch(receiver.url, {
    method: 'POST',
    headers: { 'webhook-id': 'evt_9999', 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(2_000),
  })
  expect(last.status).toBe(200)
  await waiting
})
