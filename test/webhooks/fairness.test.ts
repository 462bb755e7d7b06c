import { expect, it } from 'vitest'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { manualClock, startReceiver } from './receiver.ts'

describeDb("webhook deliveries shared between accounts (one account's dead endpoints)", () => {
  const t = useTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })

  async function accountWithEndpoints(urls: string[]) {
    const { accountId, apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    for (const url of urls) {
      const created = await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        payload: JSON.stringify({ url, enabled_events: ['*'] }),
        headers: { 'content-type': 'application/json' },
      })
      expect(created.statusCode).toBe(201)
    }
    const createPet = async (name: string) =>
      expect((await call({ method: 'POST', url: '/v1/pet', ...form({ name }) })).statusCode).toBe(201)
    return { accountId, createPet }
  }

  it("delivers another account's event at once while one account's dead endpoints hold a backlog, and holds that account to its share of the sends", async () => {
    // Never answers: each send to it waits for the whole timeout (a minute).
    const dead = await startReceiver(() => 'hang')
    const alive = await startReceiver(() => 200)
    const worker = new DeliveryWorker({
      db: t.database.db,
      box: t.app.deps.webhooks.box,
      clock: manualClock(),
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      insecure: true,
      timeoutMs: 60_000,
      concurrencyPerEndpoint: 4,
      concurrencyPerAccount: 8,
      disableAfterDays: 5,
      log: t.app.log,
    })
    try {
      // Enough dead endpoints, and events before the other account's, to fill every send of the
      // instance (32) if deliveries went oldest first across accounts.
      const stuck = await accountWithEndpoints(
        Array.from({ length: 8 }, (_, i) => `${dead.url}?endpoint=${i}`),
      )
      for (let i = 0; i < 10; i++) await stuck.createPet(`Stuck ${i}`)
      const other = await accountWithEndpoints([alive.url])
      await other.createPet('Prompt')
      worker.start()

      await waitUntil("the other account's event is delivered", async () => alive.received.length === 1)
      // While every send to the dead endpoints still waits: none of them has ended yet.
      const stuckAttempts = await t.database.db
        .selectFrom('webhook_attempts')
        .select('id')
        .where('account_id', '=', stuck.accountId)
        .execute()
      expect(stuckAttempts).toEqual([])

      // The stuck account gets its share of the sends, and no more: another event of the other
      // account, claimed after it has it, goes out while it still holds them.
      await waitUntil('the stuck account holds its 8 sends', async () => dead.received.length === 8)
      await other.createPet('Prompt again')
      await waitUntil(
        "the other account's second event is delivered",
        async () => alive.received.length === 2,
      )
      expect(dead.received).toHaveLength(8)
    } finally {
      await dead.close()
      await worker.stop()
      await alive.close()
    }
  })
})
