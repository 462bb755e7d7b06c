import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { basic, createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { openSse, type SseConnection } from './sse-client.ts'

describeDb('v1 event stream (Server-Sent Events over real HTTP)', () => {
  let t: TestApp
  let base: string
  let key: string
  let call: ReturnType<typeof withKey>
  const open: SseConnection[] = []

  beforeAll(async () => {
    t = await createTestApp({ EVENTS_HEARTBEAT_SECONDS: '0.05', EVENTS_STREAMS_PER_ACCOUNT: '3' })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    key = (await t.newAccount()).apiKey
    call = withKey(t.app, key)
  })
  afterEach(() => {
    for (const connection of open.splice(0)) connection.close()
  })
  afterAll(() => t.close())

  const stream = async (query = '', headers: Record<string, string> = {}, apiKey = key) => {
    const connection = await openSse(`${base}/v1/event/stream${query}`, {
      authorization: basic(apiKey),
      ...headers,
    })
    open.push(connection)
    return connection
  }
  const createPet = async (name: string, as = call) => {
    const res = await as({ method: 'POST', url: '/v1/pet', ...form({ name }) })
    expect(res.statusCode).toBe(201)
    return res.json() as { id: number }
  }

  it('sends each new event as id, event and data lines; data is the event as GET /v1/event/{id} answers it', async () => {
    const sse = await stream()
    expect(sse.response.status).toBe(200)
    expect(sse.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(sse.response.headers.get('cache-control')).toBe('no-store')
    const pet = await createPet('Streamed')
    const message = await sse.next()
    expect(message.event).toBe('pet.created')
    expect(message.id).toMatch(/^evt_/)
    const stored = await call({ method: 'GET', url: `/v1/event/${message.id}` })
    expect(message.data).toBe(stored.body)
    expect(JSON.parse(message.data!)).toMatchObject({ type: 'pet.created', data: { object: { id: pet.id } } })
  })

  it('starts from now: earlier events are not sent without Last-Event-ID', async () => {
    await createPet('Before')
    const sse = await stream()
    await createPet('After')
    expect(JSON.parse((await sse.next()).data!).data.object.name).toBe('After')
  })

  it('applies the list filters (type wildcard, object_id)', async () => {
    const byType = await stream('?type=user.*')
    const pet = await createPet('Filtered')
    const byObject = await stream(`?object_id=${pet.id}`)
    await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Only me' }) })
    await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ name: 'Renamed' }) })
    expect((await byType.next()).event).toBe('user.created')
    const updated = await byObject.next()
    expect(updated.event).toBe('pet.updated')
    expect(JSON.parse(updated.data!).data.previous_attributes).toEqual({ name: 'Filtered' })
    const bad = await stream('?type=pets.*')
    expect(bad.response.status).toBe(400)
    expect(await bad.response.json()).toMatchObject({ code: 'parameter_invalid', param: 'type' })
  })

  it('never sends another account’s events', async () => {
    const other = await t.newAccount()
    const sse = await stream()
    const theirs = await stream('', {}, other.apiKey)
    await createPet('Not yours', withKey(t.app, other.apiKey))
    await createPet('Yours')
    expect(JSON.parse((await sse.next()).data!).data.object.name).toBe('Yours')
    expect(JSON.parse((await theirs.next()).data!).data.object.name).toBe('Not yours')
  })

  it('resumes after Last-Event-ID: replays what came after it, then goes on live', async () => {
    const first = await stream()
    for (const name of ['R1', 'R2', 'R3']) await createPet(name)
    const r1 = await first.next()
    first.close()
    const resumed = await stream('', { 'last-event-id': r1.id! })
    const names = async (sse: SseConnection, n: number) => {
      const out: string[] = []
      for (let i = 0; i < n; i++) out.push(JSON.parse((await sse.next()).data!).data.object.name)
      return out
    }
    expect(await names(resumed, 2)).toEqual(['R2', 'R3'])
    await createPet('R4')
    expect(await names(resumed, 1)).toEqual(['R4'])
    // The query parameter does the same, for clients that cannot set headers.
    const byQuery = await stream(`?last_event_id=${r1.id}&type=pet.created`)
    expect(await names(byQuery, 3)).toEqual(['R2', 'R3', 'R4'])
  })

  it('refuses a Last-Event-ID that is not an event of the account', async () => {
    const other = await t.newAccount()
    await createPet('Elsewhere', withKey(t.app, other.apiKey))
    const theirs = (await withKey(t.app, other.apiKey)({ method: 'GET', url: '/v1/event' })).json().data[0].id
    for (const id of [theirs, 'evt_unknown']) {
      const sse = await stream('', { 'last-event-id': id })
      expect(sse.response.status).toBe(400)
      expect(sse.response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(await sse.response.json()).toMatchObject({ code: 'parameter_invalid', param: 'last_event_id' })
    }
  })

  it('sends heartbeat comments while idle', async () => {
    const sse = await stream()
    expect(await sse.nextComment()).toBe('heartbeat')
  })

  it('limits the streams an account holds open (429), and a closed stream frees its place', async () => {
    const own = await t.newAccount()
    const held = [
      await stream('', {}, own.apiKey),
      await stream('', {}, own.apiKey),
      await stream('', {}, own.apiKey),
    ]
    for (const s of held) expect(s.response.status).toBe(200)
    const refused = await stream('', {}, own.apiKey)
    expect(refused.response.status).toBe(429)
    expect(await refused.response.json()).toMatchObject({ code: 'too_many_streams' })
    held[0]!.close()
    // The server notices the disconnection asynchronously: poll until the place is free.
    for (let attempt = 0; ; attempt++) {
      const again = await stream('', {}, own.apiKey)
      if (again.response.status === 200) break
      expect(again.response.status).toBe(429)
      again.close()
      expect(attempt).toBeLessThan(200)
      await new Promise((resolve) => setImmediate(resolve))
    }
  })

  it('answers HEAD with the stream’s headers without opening a stream', async () => {
    const own = await t.newAccount()
    for (let i = 0; i < 5; i++) {
      const head = await fetch(`${base}/v1/event/stream`, {
        method: 'HEAD',
        headers: { authorization: basic(own.apiKey) },
      })
      expect(head.status).toBe(200)
      expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    }
    // The account's three places are all still free.
    for (let i = 0; i < 3; i++) expect((await stream('', {}, own.apiKey)).response.status).toBe(200)
  })

  it('needs the read:events scope', async () => {
    const petsOnly = await t.newAccount({ scopes: ['read:pets'] })
    const sse = await stream('', {}, petsOnly.apiKey)
    expect(sse.response.status).toBe(403)
  })
})

describeDb('v1 event stream: closing the app', () => {
  it('ends open streams, so close does not hang', async () => {
    const t = await createTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const { apiKey } = await t.newAccount()
    const streams = [
      await openSse(`${base}/v1/event/stream`, { authorization: basic(apiKey) }),
      await openSse(`${base}/v1/event/stream?type=pet.*`, { authorization: basic(apiKey) }),
    ]
    await t.close()
    for (const sse of streams) await sse.ended()
  })
})
