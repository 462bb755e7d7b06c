import { decodeJwt } from 'jose'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findAccountById } from '../../src/accounts/accounts-service.ts'
import { createApiKey, listApiKeys } from '../../src/keys/keys-service.ts'
import { openSandbox, resetSandbox } from '../../src/sandboxes/sandboxes-service.ts'
import { systemClock } from '../../src/webhooks/clock.ts'
import { FanOut } from '../../src/webhooks/fan-out.ts'
import type { Resolve } from '../../src/webhooks/url-policy.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, oauthClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }]

const json = (body: unknown) => ({
  payload: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
})

describeDb('sandbox accounts', () => {
  let t: TestApp
  let live: ReturnType<typeof withKey>
  let sandbox: ReturnType<typeof withKey>
  let liveAccountId: string
  let sandboxId: string
  let sandboxKey: string

  beforeAll(async () => {
    t = await createTestApp({}, { webhooks: { resolve } })
    const account = await t.newAccount()
    liveAccountId = account.accountId
    live = withKey(t.app, account.apiKey)
    sandboxId = (await openSandbox(t.database.db, liveAccountId)).sandbox.id
    sandboxKey = (await createApiKey(t.database.db, { accountId: sandboxId })).apiKey
    sandbox = withKey(t.app, sandboxKey)
  })
  afterAll(() => t.close())

  async function seed(call: ReturnType<typeof withKey>, name: string) {
    const user = await call({ method: 'POST', url: '/v1/user', ...form({ name: `${name} owner` }) })
    expect(user.statusCode, user.body).toBe(201)
    const pet = await call({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name, owner_id: user.json().id }),
      headers: { ...form({}).headers, 'idempotency-key': `seed-${name}` },
    })
    expect(pet.statusCode, pet.body).toBe(201)
    const order = await call({
      method: 'POST',
      url: '/v1/order',
      ...json({ pet_id: pet.json().id, quantity: 1 }),
    })
    expect(order.statusCode, order.body).toBe(201)
    const endpoint = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...json({ url: `https://hooks.example.com/${name}`, enabled_events: ['*'] }),
    })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    const events = await call({ method: 'GET', url: '/v1/event' })
    expect(events.statusCode).toBe(200)
    return {
      userId: user.json().id as string,
      petId: pet.json().id as number,
      orderId: order.json().id as number,
      endpointId: endpoint.json().id as string,
      eventIds: (events.json().data as { id: string }[]).map((e) => e.id),
    }
  }

  it('opens one sandbox per live account, a separate account that points at it, with pet_sk_test_ keys', async () => {
    const again = await openSandbox(t.database.db, liveAccountId)
    expect(again).toMatchObject({
      created: false,
      sandbox: { id: sandboxId, live_account_id: liveAccountId },
    })
    expect(sandboxKey).toMatch(/^pet_sk_test_[0-9A-Za-z]{36}$/)
    await expect(openSandbox(t.database.db, sandboxId)).rejects.toThrow(/only live accounts/)
  })

  it("keeps the sandbox's pets, users, orders, events and webhooks out of the live account's reach, and the reverse", async () => {
    const inSandbox = await seed(sandbox, 'Sandy')
    const inLive = await seed(live, 'Livia')

    for (const [caller, theirs] of [
      [live, inSandbox],
      [sandbox, inLive],
    ] as const) {
      const pets = await caller({ method: 'GET', url: '/v1/pet' })
      const names = (pets.json().data as { name: string }[]).map((p) => p.name)
      expect(names).toHaveLength(1)
      expect(names).not.toContain(theirs === inSandbox ? 'Sandy' : 'Livia')
      expect((await caller({ method: 'GET', url: `/v1/user/${theirs.userId}` })).statusCode).toBe(404)
      const events = (await caller({ method: 'GET', url: '/v1/event' })).json().data as { id: string }[]
      for (const id of theirs.eventIds) {
        expect(events.map((e) => e.id)).not.toContain(id)
        expect((await caller({ method: 'GET', url: `/v1/event/${id}` })).statusCode).toBe(404)
      }
      const endpoints = (await caller({ method: 'GET', url: '/v1/webhook_endpoint' })).json().data as {
        id: string
      }[]
      expect(endpoints.map((e) => e.id)).not.toContain(theirs.endpointId)
      for (const path of ['', '/delivery']) {
        const res = await caller({ method: 'GET', url: `/v1/webhook_endpoint/${theirs.endpointId}${path}` })
        expect(res.statusCode).toBe(404)
        expect(res.headers['content-type']).toContain('application/problem+json')
      }
      const rotate = await caller({
        method: 'POST',
        url: `/v1/webhook_endpoint/${theirs.endpointId}/rotate_secret`,
      })
      expect(rotate.statusCode).toBe(404)
      const remove = await caller({ method: 'DELETE', url: `/v1/webhook_endpoint/${theirs.endpointId}` })
      expect(remove.statusCode).toBe(404)
    }
    // Each account's events go to its own endpoints only, never to the other's.
    const deliveries = (endpointId: string) =>
      t.database.db
        .selectFrom('webhook_deliveries')
        .select(['event_id', 'account_id'])
        .where('endpoint_id', '=', endpointId)
        .execute()
    const laterEvent = async (call: ReturnType<typeof withKey>) => {
      expect((await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Later' }) })).statusCode).toBe(
        201,
      )
      return ((await call({ method: 'GET', url: '/v1/event?limit=1' })).json().data[0] as { id: string }).id
    }
    const sandboxEvent = await laterEvent(sandbox)
    const liveEvent = await laterEvent(live)
    // The delivery worker's fan-out (not started in tests) queues each event for its endpoints.
    const fanOut = new FanOut(t.database.db, systemClock)
    for (const [own, ownEvent, theirEvent] of [
      [inSandbox, sandboxEvent, liveEvent],
      [inLive, liveEvent, sandboxEvent],
    ] as const) {
      await waitUntil('an event reaches its own account’s endpoint', async () => {
        await fanOut.run(100)
        return (await deliveries(own.endpointId)).some((d) => d.event_id === ownEvent)
      })
      expect((await deliveries(own.endpointId)).map((d) => d.event_id)).not.toContain(theirEvent)
    }
    // A pet id the other account never used answers 404 (ids are per account).
    const fresh = await sandbox({ method: 'POST', url: '/v1/pet', ...form({ name: 'Only in the sandbox' }) })
    const freshId = fresh.json().id as number
    expect((await live({ method: 'GET', url: `/v1/pet/${freshId}` })).statusCode).toBe(404)
    expect((await live({ method: 'DELETE', url: `/v1/pet/${freshId}` })).statusCode).toBe(404)
    expect((await sandbox({ method: 'GET', url: `/v1/pet/${freshId}` })).statusCode).toBe(200)
  })

  it('resets a sandbox: its data goes, its keys, apps and endpoints stay, and the live account is untouched', async () => {
    const before = async (call: ReturnType<typeof withKey>) => ({
      pets: (await call({ method: 'GET', url: '/v1/pet' })).json().data.length as number,
      users: (await call({ method: 'GET', url: '/v1/user' })).json().data.length as number,
      orders: (await call({ method: 'GET', url: '/v1/order' })).json().data.length as number,
      events: (await call({ method: 'GET', url: '/v1/event' })).json().data.length as number,
      endpoints: (await call({ method: 'GET', url: '/v1/webhook_endpoint' })).json().data.length as number,
    })
    const liveBefore = await before(live)
    expect(liveBefore.pets).toBeGreaterThan(0)
    expect((await before(sandbox)).pets).toBeGreaterThan(0)
    const keysBefore = await listApiKeys(t.database.db, sandboxId)

    await resetSandbox(t.database.db, sandboxId)

    expect(await before(sandbox)).toEqual({ pets: 0, users: 0, orders: 0, events: 0, endpoints: 1 })
    expect(await before(live)).toEqual(liveBefore)
    expect((await listApiKeys(t.database.db, sandboxId)).map((k) => k.id)).toEqual(
      keysBefore.map((k) => k.id),
    )
    expect(await findAccountById(t.database.db, sandboxId)).toBeDefined()
    // The same key keeps working, and the sandbox's ids never name an object of before the reset.
    const after = await sandbox({ method: 'POST', url: '/v1/pet', ...form({ name: 'After' }) })
    expect(after.statusCode, after.body).toBe(201)
    expect(after.json().id).toBeGreaterThan(1)
    // The same Idempotency-Key creates again: the stored answers went with the data.
    const replay = await sandbox({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Sandy' }),
      headers: { ...form({}).headers, 'idempotency-key': 'seed-Sandy' },
    })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBeUndefined()
  })

  it('refuses to reset a live account', async () => {
    await expect(resetSandbox(t.database.db, liveAccountId)).rejects.toThrow(/not a sandbox/)
    expect((await live({ method: 'GET', url: '/v1/pet' })).json().data.length).toBeGreaterThan(0)
  })

  it("names the mode in every access token: a sandbox app's tokens say sandbox and reach only the sandbox", async () => {
    const sandboxApp = await oauthClient(t.database.db, { accountId: sandboxId })
    const liveApp = await oauthClient(t.database.db, { accountId: liveAccountId })
    const sandboxToken = await accessToken(t.app, sandboxApp)
    const liveToken = await accessToken(t.app, liveApp)
    expect(decodeJwt(sandboxToken)).toMatchObject({ account_id: sandboxId, mode: 'sandbox' })
    expect(decodeJwt(liveToken)).toMatchObject({ account_id: liveAccountId, mode: 'live' })
    const sandboxPet = await sandbox({ method: 'POST', url: '/v1/pet', ...form({ name: 'Tokened' }) })
    const id = sandboxPet.json().id as number
    const viaSandbox = await t.app.inject({
      method: 'GET',
      url: `/v2/pet/${id}`,
      headers: bearer(sandboxToken),
    })
    expect(viaSandbox.statusCode).toBe(200)
    expect(viaSandbox.json().name).toBe('Tokened')
    const viaLive = await t.app.inject({ method: 'GET', url: `/v2/pet/${id}`, headers: bearer(liveToken) })
    expect(viaLive.statusCode).toBe(404)
  })

  it("answers GET /v1/account with the key's account and its mode, for any key of it", async () => {
    const ofLive = await live({ method: 'GET', url: '/v1/account' })
    expect(ofLive.statusCode).toBe(200)
    expect(ofLive.json()).toMatchObject({
      id: liveAccountId,
      object: 'account',
      mode: 'live',
      live_account_id: null,
    })
    const ofSandbox = await sandbox({ method: 'GET', url: '/v1/account' })
    expect(ofSandbox.json()).toMatchObject({ id: sandboxId, mode: 'sandbox', live_account_id: liveAccountId })
    // A key restricted to one scope may still ask which account it reaches.
    const narrow = (await createApiKey(t.database.db, { accountId: sandboxId, scopes: ['read:pets'] })).apiKey
    expect((await withKey(t.app, narrow)({ method: 'GET', url: '/v1/account' })).json().id).toBe(sandboxId)
    const none = await t.app.inject({ method: 'GET', url: '/v1/account' })
    expect(none.statusCode).toBe(401)
  })
})
