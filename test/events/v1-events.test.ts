import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EventV1 } from '../../src/events/event.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('v1 events: list and get', () => {
  let t: TestApp
  let call: ReturnType<typeof withKey>
  let other: ReturnType<typeof withKey>
  let otherEventId: string
  let pet: { id: number }
  let user: { id: string }

  beforeAll(async () => {
    t = await createTestApp()
    call = withKey(t.app, (await t.newAccount()).apiKey)
    other = withKey(t.app, (await t.newAccount()).apiKey)
    // Another account's change: never listed, never readable here.
    await other({ method: 'POST', url: '/v1/pet', ...form({ name: 'Theirs' }) })
    otherEventId = (await other({ method: 'GET', url: '/v1/event' })).json().data[0].id
    user = (await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Ann' }) })).json()
    pet = (await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', owner_id: user.id }) })).json()
    await call({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ name: 'Max', species: 'dog' }) })
    await call({ method: 'DELETE', url: `/v1/pet/${pet.id}` })
  })
  afterAll(() => t.close())

  const list = async (query: string) => {
    const res = await call({ method: 'GET', url: `/v1/event${query}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { object: string; data: EventV1[]; has_more: boolean; url: string }
  }

  it('lists the account’s events newest first, in the v1 list shape', async () => {
    const page = await list('')
    expect(page).toMatchObject({ object: 'list', has_more: false, url: '/v1/event' })
    expect(page.data.map((e) => e.type)).toEqual([
      'pet.deleted',
      'pet.updated',
      'pet.created',
      'user.created',
    ])
    for (const event of page.data) {
      expect(event.id).toMatch(/^evt_[0-9A-Za-z]{20}$/)
      expect(event).toMatchObject({ object: 'event' })
      expect(event.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
  })

  it('carries the object as v1 shows it, and previous_attributes on updates only', async () => {
    const [deleted, updated, created] = (await list('')).data
    expect(created!.data.object).toMatchObject({ id: pet.id, object: 'pet', name: 'Rex', owner_id: user.id })
    expect(created!.data).not.toHaveProperty('previous_attributes')
    expect(updated!.data.object).toMatchObject({ id: pet.id, name: 'Max', species: 'dog', version: 2 })
    expect(updated!.data.previous_attributes).toMatchObject({ name: 'Rex', species: null })
    expect(deleted!.data.object).toMatchObject({ id: pet.id, name: 'Max' })
    expect(deleted!.data).not.toHaveProperty('previous_attributes')
  })

  it('gets one event by id, the same as the list shows it', async () => {
    const [first] = (await list('')).data
    const res = await call({ method: 'GET', url: `/v1/event/${first!.id}` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(first)
  })

  it('answers 404 for another account’s event, and never lists it', async () => {
    const res = await call({ method: 'GET', url: `/v1/event/${otherEventId}` })
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ code: 'event_not_found' })
    expect((await list('?limit=100')).data.map((e) => e.id)).not.toContain(otherEventId)
    // Nor as a cursor: it names no event of this list.
    const cursor = await call({ method: 'GET', url: `/v1/event?starting_after=${otherEventId}` })
    expect(cursor.statusCode).toBe(400)
    expect(cursor.json()).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' })
    const missing = await call({ method: 'GET', url: '/v1/event/evt_nope' })
    expect(missing.statusCode).toBe(404)
  })

  it('filters by exact type, by wildcard, repeated or comma-separated', async () => {
    const types = async (q: string) => (await list(q)).data.map((e) => e.type)
    expect(await types('?type=pet.created')).toEqual(['pet.created'])
    expect(await types('?type=pet.*')).toEqual(['pet.deleted', 'pet.updated', 'pet.created'])
    expect(await types('?type=user.created,pet.deleted')).toEqual(['pet.deleted', 'user.created'])
    expect(await types('?type=user.*&type=pet.updated')).toEqual(['pet.updated', 'user.created'])
    expect(await types('?type=*')).toHaveLength(4)
  })

  it('refuses an unknown type with 400 naming the known ones', async () => {
    for (const bad of ['pets.created', 'invoice.*', 'pet.%', 'webhook.test']) {
      const res = await call({ method: 'GET', url: `/v1/event?type=${encodeURIComponent(bad)}` })
      expect(res.statusCode, bad).toBe(400)
      expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: 'type' })
      expect(res.json().detail).toContain('pet.created')
    }
  })

  it('filters by object_id and by creation time (ISO 8601 or Unix seconds)', async () => {
    const all = (await list('')).data
    expect((await list(`?object_id=${user.id}`)).data.map((e) => e.type)).toEqual(['user.created'])
    expect((await list(`?object_id=${pet.id}`)).data).toHaveLength(3)
    const oldest = all.at(-1)!.created_at as string
    const newest = all[0]!.created_at as string
    expect((await list(`?created[gte]=${encodeURIComponent(oldest)}`)).data).toHaveLength(4)
    expect((await list(`?created[lte]=${encodeURIComponent(newest)}`)).data).toHaveLength(4)
    const future = Math.floor(Date.now() / 1000) + 3600
    expect((await list(`?created[gte]=${future}`)).data).toEqual([])
    expect((await list('?created[lte]=2000-01-01T00:00:00Z')).data).toEqual([])
    expect((await list(`?created[gte]=2000-01-01&created[lte]=${future}`)).data).toHaveLength(4)
    const bad = await call({ method: 'GET', url: '/v1/event?created[gte]=yesterday' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ code: 'parameter_invalid', param: 'created[gte]' })
  })

  it('refuses unknown parameters', async () => {
    const res = await call({ method: 'GET', url: '/v1/event?kind=pet' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_unknown', param: 'kind' })
  })
})

describeDb('v1 events: cursors', () => {
  let t: TestApp
  let call: ReturnType<typeof withKey>

  beforeAll(async () => {
    t = await createTestApp()
    call = withKey(t.app, (await t.newAccount()).apiKey)
    for (let i = 0; i < 7; i++) {
      await call({ method: 'POST', url: '/v1/user', ...form({ name: `U${i}` }) })
    }
  })
  afterAll(() => t.close())

  const page = async (q: string) => (await call({ method: 'GET', url: `/v1/event${q}` })).json()
  const names = (p: { data: Array<{ data: { object: { name: string } } }> }) =>
    p.data.map((e) => e.data.object.name)

  it('pages forward with starting_after and back with ending_before, without gaps or repeats', async () => {
    const first = await page('?limit=3')
    expect(names(first)).toEqual(['U6', 'U5', 'U4'])
    expect(first.has_more).toBe(true)
    const second = await page(`?limit=3&starting_after=${first.data[2].id}`)
    expect(names(second)).toEqual(['U3', 'U2', 'U1'])
    const third = await page(`?limit=3&starting_after=${second.data[2].id}`)
    expect(names(third)).toEqual(['U0'])
    expect(third.has_more).toBe(false)
    const back = await page(`?limit=3&ending_before=${third.data[0].id}`)
    expect(names(back)).toEqual(['U3', 'U2', 'U1'])
    expect(back.has_more).toBe(true)
    const backToStart = await page(`?limit=3&ending_before=${second.data[0].id}`)
    expect(names(backToStart)).toEqual(['U6', 'U5', 'U4'])
    expect(backToStart.has_more).toBe(false)
  })

  it('pages within a filter', async () => {
    const first = await page('?limit=2&type=user.created')
    const second = await page(`?limit=2&type=user.created&starting_after=${first.data[1].id}`)
    expect(names(second)).toEqual(['U4', 'U3'])
  })

  it('refuses both cursors at once', async () => {
    const first = await page('?limit=1')
    const res = await call({
      method: 'GET',
      url: `/v1/event?starting_after=${first.data[0].id}&ending_before=${first.data[0].id}`,
    })
    expect(res.statusCode).toBe(400)
  })
})

describeDb('v1 events: scope', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  it('needs read:events: a key restricted to other scopes gets 403, one with it reads', async () => {
    const petsOnly = withKey(t.app, (await t.newAccount({ scopes: ['read:pets'] })).apiKey)
    const res = await petsOnly({ method: 'GET', url: '/v1/event' })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ code: 'insufficient_scope' })
    const eventsOnly = withKey(t.app, (await t.newAccount({ scopes: ['read:events'] })).apiKey)
    expect((await eventsOnly({ method: 'GET', url: '/v1/event' })).statusCode).toBe(200)
    expect((await eventsOnly({ method: 'GET', url: '/v1/pet' })).statusCode).toBe(403)
  })
})
