import { Webhook } from 'standardwebhooks'
import { expect, it } from 'vitest'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'
import { manualClock, startReceiver } from '../webhooks/receiver.ts'

describeDb('order events (events API and webhooks)', () => {
  const clock = manualClock()

  const t = useTestApp(
    { WEBHOOKS_ALLOW_INSECURE: 'true' },
    { webhooks: { resolve: async () => [{ address: '127.0.0.1', family: 4 }], clock } },
  )

  async function account() {
    const client = await newClient(t)
    const call = withKey(t.app, client.apiKey)
    const token = await accessToken(t.app, client)
    const pet = (await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex' }) })).json().id as number
    const v2 = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) })
    return { call, v2, pet }
  }

  it('writes order.created, order.updated (with previous_attributes in v1 names) and order.deleted', async () => {
    const { call, v2, pet } = await account()
    await v2('POST', '/v2/store/order', { id: 5, petId: pet, quantity: 2 })
    await v2('POST', '/v2/store/order', { id: 5, petId: pet, quantity: 3, shipDate: '2026-12-01T00:00:00Z' })
    await call({ method: 'PATCH', url: '/v1/order/5', payload: { complete: true } })
    await v2('DELETE', '/v2/store/order/5')
    const list = await call({ method: 'GET', url: '/v1/event?type=order.*&limit=10' })
    expect(list.statusCode, list.body).toBe(200)
    const events = list.json().data.reverse()
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'order.created',
      'order.updated',
      'order.updated',
      'order.deleted',
    ])
    expect(events[0].data.object).toMatchObject({
      id: 5,
      object: 'order',
      pet_id: pet,
      quantity: 2,
      ship_date: null,
    })
    expect(events[1].data.previous_attributes).toEqual({ quantity: 2, ship_date: null })
    expect(events[1].data.object).toMatchObject({
      quantity: 3,
      ship_date: '2026-12-01T00:00:00Z',
      version: 2,
    })
    expect(events[2].data.previous_attributes).toEqual({ complete: false })
    expect(events[3].data.object).toMatchObject({ id: 5, complete: true, version: 3 })
    const byObject = await call({ method: 'GET', url: '/v1/event?type=order.deleted&object_id=5' })
    expect(byObject.json().data).toHaveLength(1)
  })

  it('writes no event for a failed order, nor for a replace that changes nothing', async () => {
    const { call, v2, pet } = await account()
    expect((await v2('POST', '/v2/store/order', { id: 6, petId: pet + 1000 })).statusCode).toBe(400)
    await v2('POST', '/v2/store/order', { id: 6, petId: pet })
    await v2('POST', '/v2/store/order', { id: 6, petId: pet })
    const events = (await call({ method: 'GET', url: '/v1/event?type=order.*' })).json().data
    expect(events.map((e: { type: string }) => e.type)).toEqual(['order.created'])
  })

  it('delivers order events to a webhook endpoint subscribed to order.*', async () => {
    const receiver = await startReceiver(() => 200)
    try {
      const { call, v2, pet } = await account()
      const endpoint = await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        payload: { url: receiver.url, enabled_events: ['order.*'] },
      })
      expect(endpoint.statusCode, endpoint.body).toBe(201)
      await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Not an order' }) })
      await v2('POST', '/v2/store/order', { id: 8, petId: pet })
      await new DeliveryWorker({
        db: t.database.db,
        box: t.app.deps.webhooks.box,
        clock,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        insecure: true,
        timeoutMs: 5_000,
        concurrencyPerEndpoint: 4,
        concurrencyPerAccount: 8,
        disableAfterDays: 5,
        log: t.app.log,
        random: () => 0.5,
      }).runOnce()
      expect(receiver.received).toHaveLength(1)
      const [delivery] = receiver.received
      const event = new Webhook(endpoint.json().secret).verify(
        delivery!.body,
        delivery!.headers as Record<string, string>,
      )
      expect(event).toMatchObject({
        type: 'order.created',
        data: { object: { id: 8, object: 'order', pet_id: pet } },
      })
    } finally {
      await receiver.close()
    }
  })

  it('places one order when many requests post the same new id at once; the rest replace it', async () => {
    const { call, v2, pet } = await account()
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        v2('POST', '/v2/store/order', { id: 77, petId: pet, quantity: i + 1 }),
      ),
    )
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200)
    const orders = (await call({ method: 'GET', url: '/v1/order?limit=100' })).json().data
    expect(orders.map((o: { id: number }) => o.id)).toEqual([77])
    const types = (await call({ method: 'GET', url: '/v1/event?type=order.*&limit=100' })).json().data
    expect(types.filter((e: { type: string }) => e.type === 'order.created')).toHaveLength(1)
    // Every answer is a version the order had: no write was lost silently.
    expect(orders[0].version).toBe(types.length)
  })
})
