import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts'
import { signatureEntry } from '../../src/webhooks/signing.ts'
import type { Resolve } from '../../src/webhooks/url-policy.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { type Answer, manualClock, type Received, startReceiver } from './receiver.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describeDb('webhook deliveries (the worker, time injected)', () => {
  const clock = manualClock()
  /** Names the tests point at loopback or at public addresses, without the network. */
  const dns = new Map<string, string>()
  const resolve: Resolve = async (host) => {
    const address = dns.get(host)
    if (address === undefined) throw new Error('ENOTFOUND')
    return [{ address, family: 4 }]
  }
  let t: TestApp
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined
  let script: (r: Received, n: number) => Answer = () => 200

  beforeAll(async () => {
    t = await createTestApp(
      { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_TIMEOUT_SECONDS: '0.3' },
      { webhooks: { resolve, clock } },
    )
  })
  afterAll(async () => t.close())
  afterEach(async () => {
    await receiver?.close()
    receiver = undefined
    script = () => 200
    clock.reset()
  })

  function worker(options: { insecure?: boolean; disableAfterDays?: number } = {}) {
    return new DeliveryWorker({
      db: t.database.db,
      box: t.app.deps.webhooks.box,
      clock,
      resolve,
      insecure: options.insecure ?? true,
      timeoutMs: 300,
      concurrencyPerEndpoint: 4,
      concurrencyPerAccount: 8,
      disableAfterDays: options.disableAfterDays ?? 5,
      log: t.app.log,
      random: () => 0.5,
    })
  }

  /** An account with an endpoint on a fresh loopback receiver. */
  async function setUp(enabledEvents = ['*'], urlFor?: (port: number) => string) {
    receiver = await startReceiver((r, n) => script(r, n))
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const endpoint = (
      await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        payload: JSON.stringify({
          url: urlFor?.(receiver.port) ?? receiver.url,
          enabled_events: enabledEvents,
        }),
        headers: { 'content-type': 'application/json' },
      })
    ).json()
    expect(endpoint.secret).toMatch(/^whsec_/)
    const createPet = async (name: string) =>
      (await call({ method: 'POST', url: '/v1/pet', ...form({ name }) })).json() as { id: number }
    const log = async (query = '') =>
      (await call({ method: 'GET', url: `/v1/webhook_endpoint/${endpoint.id}/delivery${query}` })).json()
    return { call, endpoint, createPet, log, receiver }
  }

  it('delivers each event as the events API shows it, signed so that the standardwebhooks package verifies it', async () => {
    const { endpoint, createPet, log, receiver } = await setUp(['pet.created'])
    const pet = await createPet('Rex')
    await worker().runOnce()
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    const event = new Webhook(endpoint.secret).verify(
      delivery!.body,
      delivery!.headers as Record<string, string>,
    )
    expect(event).toMatchObject({
      object: 'event',
      type: 'pet.created',
      data: { object: { id: pet.id, name: 'Rex' } },
    })
    expect(delivery!.headers['webhook-id']).toBe((event as { id: string }).id)
    expect(delivery!.headers['content-type']).toBe('application/json')
    const entries = (await log()).data
    expect(entries).toEqual([
      expect.objectContaining({
        object: 'webhook_delivery',
        endpoint_id: endpoint.id,
        event_id: (event as { id: string }).id,
        event_type: 'pet.created',
        attempt: 1,
        status: 'succeeded',
        response_status: 200,
        response_body_excerpt: 'answer 200',
        error: null,
        next_attempt_at: null,
      }),
    ])
    expect(entries[0].id).toMatch(/^wd_/)
    // Nothing more to send: a second round sends nothing twice.
    await worker().runOnce()
    expect(receiver.received).toHaveLength(1)
  })

  it('retries a 500, then a timeout, on the backoff schedule, until a 200', async () => {
    const { createPet, log, receiver } = await setUp()
    script = (_r, n) => (n === 1 ? 500 : n === 2 ? 'hang' : 200)
    await createPet('Bo')
    const w = worker()
    const start = clock.now()
    await w.runOnce()
    let [latest] = (await log()).data
    expect(latest).toMatchObject({ attempt: 1, status: 'retrying', response_status: 500 })
    expect(latest.error).toContain('answered 500')
    // 30 s (jitter drawn at the middle of its ±25 % range).
    expect(Date.parse(latest.next_attempt_at) - start).toBe(30_000)
    // Not before it is due.
    clock.advance(29_000)
    await w.runOnce()
    expect(receiver.received).toHaveLength(1)
    clock.advanceTo(Date.parse(latest.next_attempt_at))
    const second = clock.now()
    await w.runOnce()
    ;[latest] = (await log()).data
    expect(latest).toMatchObject({
      attempt: 2,
      status: 'retrying',
      response_status: null,
      error: 'no answer within 0.3 s',
    })
    expect(Date.parse(latest.next_attempt_at) - second).toBe(120_000)
    clock.advanceTo(Date.parse(latest.next_attempt_at))
    await w.runOnce()
    const entries = (await log()).data
    expect(entries.map((e: { attempt: number; status: string }) => [e.attempt, e.status])).toEqual([
      [3, 'succeeded'],
      [2, 'retrying'],
      [1, 'retrying'],
    ])
    // The same webhook-id on every attempt, for the receiver's de-duplication.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1)
  })

  it('gives up after 3 days of failures: the last attempt is failed, with no next attempt', async () => {
    const { createPet, log } = await setUp()
    script = () => 503
    await createPet('Gone')
    const w = worker()
    const start = clock.now()
    for (let i = 0; i < 30; i++) {
      await w.runOnce()
      const [latest] = (await log()).data
      if (latest.status === 'failed') break
      clock.advanceTo(Date.parse(latest.next_attempt_at))
    }
    const entries = (await log('?limit=100')).data
    expect(entries[0]).toMatchObject({ status: 'failed', next_attempt_at: null, response_status: 503 })
    expect(entries.slice(1).every((e: { status: string }) => e.status === 'retrying')).toBe(true)
    // 30 s, 2 min, 8 min, 32 min, ~2 h, ~8.5 h, then every 12 h: 12 attempts in 3 days.
    expect(entries).toHaveLength(12)
    expect(Date.parse(entries[0].attempted_at) - start).toBeLessThanOrEqual(3 * DAY)
  })

  it('keeps each object in order: a later event waits while an earlier one is retrying', async () => {
    const { call, createPet, receiver } = await setUp()
    script = (_r, n) => (n === 1 ? 500 : 200)
    const a = await createPet('A')
    await call({ method: 'PATCH', url: `/v1/pet/${a.id}`, ...form({ name: 'A2' }) })
    const b = await createPet('B')
    const w = worker()
    await w.runOnce()
    const seen = () =>
      receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { object: { id: number } } })
    // A's creation failed; A's update waits for it; B is not held up.
    expect(seen().map((e) => [e.type, e.data.object.id])).toEqual([
      ['pet.created', a.id],
      ['pet.created', b.id],
    ])
    clock.advance(HOUR)
    await w.runOnce()
    expect(seen().map((e) => [e.type, e.data.object.id])).toEqual([
      ['pet.created', a.id],
      ['pet.created', b.id],
      ['pet.created', a.id],
      ['pet.updated', a.id],
    ])
  })

  it('signs with both secrets during a rotation, and with the new one only once the overlap ends', async () => {
    const { call, endpoint, createPet, receiver } = await setUp()
    const rotated = (
      await call({
        method: 'POST',
        url: `/v1/webhook_endpoint/${endpoint.id}/rotate_secret`,
        ...form({ expire_current_in_hours: '1' }),
      })
    ).json()
    await createPet('During')
    const w = worker()
    await w.runOnce()
    const during = receiver.received[0]!
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const secret of [endpoint.secret, rotated.secret]) {
      expect(new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).toBeTruthy()
    }
    clock.advance(2 * HOUR)
    await createPet('After')
    await w.runOnce()
    const after = receiver.received[1]!
    // Signed at the clock's time, two hours on: by the new secret alone.
    const timestamp = Number(after.headers['webhook-timestamp'])
    expect(timestamp).toBe(Math.floor(clock.now() / 1000))
    expect(after.headers['webhook-signature']).toBe(
      signatureEntry(rotated.secret, String(after.headers['webhook-id']), timestamp, after.body),
    )
  })

  it('sends a webhook.test event and resends an event on request', async () => {
    const { call, endpoint, createPet, receiver } = await setUp(['user.*'])
    const test = await call({ method: 'POST', url: `/v1/webhook_endpoint/${endpoint.id}/test` })
    expect(test.statusCode).toBe(202)
    await createPet('Unsubscribed')
    const w = worker()
    await w.runOnce()
    expect(receiver.received).toHaveLength(1)
    const sent = JSON.parse(receiver.received[0]!.body)
    expect(sent).toMatchObject({
      id: test.json().event_id,
      type: 'webhook.test',
      data: { object: { id: endpoint.id } },
    })
    const event = await t.database.db
      .selectFrom('events')
      .select('id')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    const resend = await call({
      method: 'POST',
      url: `/v1/webhook_endpoint/${endpoint.id}/resend`,
      ...form({ event_id: event.id }),
    })
    expect(resend.statusCode).toBe(202)
    await w.runOnce()
    expect(receiver.received[1]!.headers['webhook-id']).toBe(event.id)
    const missing = await call({
      method: 'POST',
      url: `/v1/webhook_endpoint/${endpoint.id}/resend`,
      ...form({ event_id: 'evt_nothing' }),
    })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('event_not_found')
  })

  it('disables an endpoint whose deliveries have all failed for 5 days, saying why', async () => {
    const { call, endpoint, createPet } = await setUp()
    script = () => 500
    const w = worker({ disableAfterDays: 5 })
    for (let day = 0; day <= 6; day++) {
      await createPet(`day ${day}`)
      await w.runOnce()
      clock.advance(DAY)
    }
    const read = (await call({ method: 'GET', url: `/v1/webhook_endpoint/${endpoint.id}` })).json()
    expect(read.status).toBe('disabled')
    expect(read.disabled_reason).toContain('5 days in which every delivery failed')
    const open = () =>
      t.database.db
        .selectFrom('webhook_deliveries')
        .select('next_attempt_at')
        .where('endpoint_id', '=', endpoint.id)
        .where('status', 'in', ['pending', 'retrying'])
        .execute()
    // While it is disabled, its open deliveries wait with no due time, out of the claim's way.
    const held = await open()
    expect(held.length).toBeGreaterThan(0)
    expect(held.map((d) => d.next_attempt_at)).toEqual(held.map(() => null))
    const enabled = await call({
      method: 'PATCH',
      url: `/v1/webhook_endpoint/${endpoint.id}`,
      payload: JSON.stringify({ status: 'enabled' }),
      headers: { 'content-type': 'application/json' },
    })
    expect(enabled.json()).toMatchObject({ status: 'enabled', disabled_reason: null })
    // Enabled again, what waited is due at once.
    script = () => 200
    await w.runOnce()
    expect(await open()).toEqual([])
  })

  it('connects to the address it checked, and checks again at delivery (DNS rebinding)', async () => {
    // Not a real name: only the pinned lookup can reach the receiver through it.
    dns.set('receiver.test', '127.0.0.1')
    const pinned = await setUp(['*'], (port) => `http://receiver.test:${port}/hook`)
    await pinned.createPet('Pinned')
    await worker().runOnce()
    expect(pinned.receiver.received).toHaveLength(1)

    // Production rules: the name was public when saved, and points at loopback by delivery time.
    dns.set('rebind.example.com', '93.184.215.14')
    const strict = await createTestApp({}, { webhooks: { resolve, clock } })
    try {
      const { apiKey } = await strict.newAccount()
      const call = withKey(strict.app, apiKey)
      const endpoint = (
        await call({
          method: 'POST',
          url: '/v1/webhook_endpoint',
          payload: JSON.stringify({ url: 'https://rebind.example.com/hook', enabled_events: ['*'] }),
          headers: { 'content-type': 'application/json' },
        })
      ).json()
      expect(endpoint.status).toBe('enabled')
      dns.set('rebind.example.com', '127.0.0.1')
      await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rebound' }) })
      await new DeliveryWorker({
        db: strict.database.db,
        box: strict.app.deps.webhooks.box,
        clock,
        resolve,
        insecure: false,
        timeoutMs: 300,
        concurrencyPerEndpoint: 1,
        concurrencyPerAccount: 8,
        disableAfterDays: 5,
        log: strict.app.log,
      }).runOnce()
      const [attempt] = (
        await call({ method: 'GET', url: `/v1/webhook_endpoint/${endpoint.id}/delivery` })
      ).json().data
      expect(attempt).toMatchObject({ status: 'retrying', response_status: null })
      expect(attempt.error).toContain('resolves to a loopback address 127.0.0.1')
    } finally {
      await strict.close()
    }
  })

  it("shows an account only its own endpoints' delivery log", async () => {
    const { endpoint, createPet } = await setUp()
    await createPet('Mine')
    await worker().runOnce()
    const other = await t.newAccount()
    const res = await withKey(
      t.app,
      other.apiKey,
    )({ method: 'GET', url: `/v1/webhook_endpoint/${endpoint.id}/delivery` })
    expect(res.statusCode).toBe(404)
    expect(res.json().code).toBe('webhook_endpoint_not_found')
  })
})
