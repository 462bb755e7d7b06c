import { beforeAll, expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient } from '../../helpers/oauth.ts'

describeDb('v1 orders', () => {
  let call: ReturnType<typeof withKey>
  let other: ReturnType<typeof withKey>
  let pet: number
  let otherPet: number

  const newPet = async (as: ReturnType<typeof withKey>, name: string): Promise<number> => {
    const res = await as({ method: 'POST', url: '/v1/pet', ...form({ name }) })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id
  }

  const createOrder = async (fields: Record<string, string> = {}, as = call) => {
    const res = await as({ method: 'POST', url: '/v1/order', ...form({ pet_id: String(pet), ...fields }) })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }

  const t = useTestApp()
  beforeAll(async () => {
    call = withKey(t.app, (await t.newAccount()).apiKey)
    const otherClient = await newClient(t)
    other = withKey(t.app, otherClient.apiKey)
    pet = await newPet(call, 'Rex')
    // An id only the other account has (pet ids are per account: both have a pet 1).
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(await accessToken(t.app, otherClient)),
      payload: { id: 4242, name: 'Tom', photoUrls: [] },
    })
    otherPet = created.json().id
    expect(otherPet).toBe(4242)
  })

  it('creates an order from form fields (integers, booleans and dates read from text), with Location and ETag', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/order',
      ...form({ pet_id: String(pet), quantity: '3', ship_date: '2026-12-24T18:00:00Z', complete: 'true' }),
    })
    expect(res.statusCode, res.body).toBe(201)
    const order = res.json()
    expect(order).toEqual({
      id: order.id,
      object: 'order',
      pet_id: pet,
      quantity: 3,
      ship_date: '2026-12-24T18:00:00Z',
      status: 'placed',
      complete: true,
      version: 1,
      created_at: order.created_at,
      updated_at: order.created_at,
    })
    expect(res.headers.location).toBe(`/v1/order/${order.id}`)
    expect(res.headers.etag).toBe('"1"')
  })

  it('creates an order from JSON with the defaults', async () => {
    const res = await call({ method: 'POST', url: '/v1/order', payload: { pet_id: pet } })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({
      pet_id: pet,
      quantity: 1,
      ship_date: null,
      status: 'placed',
      complete: false,
    })
  })

  it('refuses a missing or foreign pet_id, bad values and unknown fields, naming them', async () => {
    const missing = await call({ method: 'POST', url: '/v1/order', ...form({ quantity: '1' }) })
    expect(missing.json()).toMatchObject({ status: 400, code: 'parameter_missing', param: 'pet_id' })
    const foreign = await call({ method: 'POST', url: '/v1/order', ...form({ pet_id: String(otherPet) }) })
    expect(foreign.statusCode).toBe(400)
    expect(foreign.json()).toMatchObject({ code: 'order_pet_not_found', param: 'pet_id' })
    for (const [field, value] of [
      ['quantity', '0'],
      ['quantity', 'two'],
      ['complete', 'yes'],
      ['ship_date', 'soon'],
      ['status', 'shipped'],
    ] as const) {
      const res = await call({
        method: 'POST',
        url: '/v1/order',
        ...form({ pet_id: String(pet), [field]: value }),
      })
      expect(res.statusCode, `${field}=${value}`).toBe(400)
      expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: field })
    }
    const unknown = await call({
      method: 'POST',
      url: '/v1/order',
      ...form({ pet_id: String(pet), petId: '1' }),
    })
    expect(unknown.json()).toMatchObject({ code: 'parameter_unknown', param: 'petId' })
  })

  it('gets, patches (an empty ship_date clears it; If-Match) and deletes an order', async () => {
    const order = await createOrder({ ship_date: '2026-12-01T09:00:00+02:00' })
    expect((await call({ method: 'GET', url: `/v1/order/${order.id}` })).json()).toEqual(order)
    const patched = await call({
      method: 'PATCH',
      url: `/v1/order/${order.id}`,
      ...form({ ship_date: '', status: 'approved' }),
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect(patched.json()).toMatchObject({ ship_date: null, status: 'approved', version: 2 })
    const stale = await call({
      method: 'PATCH',
      url: `/v1/order/${order.id}`,
      headers: { 'if-match': '"1"' },
      payload: { quantity: 5 },
    })
    expect(stale.statusCode).toBe(412)
    const foreignPet = await call({
      method: 'PATCH',
      url: `/v1/order/${order.id}`,
      payload: { pet_id: otherPet },
    })
    expect(foreignPet.json()).toMatchObject({ code: 'order_pet_not_found', param: 'pet_id' })
    const deleted = await call({ method: 'DELETE', url: `/v1/order/${order.id}` })
    expect(deleted.json()).toEqual({ id: order.id, object: 'order', deleted: true })
    expect((await call({ method: 'GET', url: `/v1/order/${order.id}` })).statusCode).toBe(404)
  })

  it('lists newest first by creation, whatever the ids, with cursors and filters', async () => {
    const fresh = withKey(t.app, (await t.newAccount()).apiKey)
    const freshPet = await newPet(fresh, 'Kit')
    const secondPet = await newPet(fresh, 'Bo')
    const ids: number[] = []
    for (const petId of [freshPet, secondPet, freshPet, freshPet]) {
      const res = await fresh({ method: 'POST', url: '/v1/order', payload: { pet_id: petId } })
      ids.push(res.json().id)
    }
    const page = (await fresh({ method: 'GET', url: '/v1/order?limit=2' })).json()
    expect(page).toMatchObject({ object: 'list', has_more: true, url: '/v1/order' })
    expect(page.data.map((o: { id: number }) => o.id)).toEqual([ids[3], ids[2]])
    const next = (await fresh({ method: 'GET', url: `/v1/order?limit=2&starting_after=${ids[2]}` })).json()
    expect(next.data.map((o: { id: number }) => o.id)).toEqual([ids[1], ids[0]])
    expect(next.has_more).toBe(false)
    const back = (await fresh({ method: 'GET', url: `/v1/order?limit=10&ending_before=${ids[1]}` })).json()
    expect(back.data.map((o: { id: number }) => o.id)).toEqual([ids[3], ids[2]])
    const ofPet = (await fresh({ method: 'GET', url: `/v1/order?pet_id=${secondPet}` })).json()
    expect(ofPet.data.map((o: { id: number }) => o.id)).toEqual([ids[1]])
    const foreignCursor = await other({ method: 'GET', url: `/v1/order?starting_after=${ids[0]}` })
    expect(foreignCursor.statusCode).toBe(400)
    expect(foreignCursor.json()).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' })
  })

  it('lists by creation when v2 chose the ids (900 was made before 5, so it is older)', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const own = withKey(t.app, client.apiKey)
    const petId = (
      await t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(token),
        payload: { name: 'Ace', photoUrls: [] },
      })
    ).json().id
    for (const id of [900, 5, 77]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/store/order',
        headers: bearer(token),
        payload: { id, petId },
      })
      expect(res.statusCode, res.body).toBe(200)
    }
    const list = (await own({ method: 'GET', url: '/v1/order' })).json()
    expect(list.data.map((o: { id: number }) => o.id)).toEqual([77, 5, 900])
  })

  it('keeps accounts apart: another account’s order answers 404 and is never listed', async () => {
    const order = await createOrder()
    for (const method of ['GET', 'DELETE'] as const) {
      expect((await other({ method, url: `/v1/order/${order.id}` })).statusCode).toBe(404)
    }
    expect(
      (await other({ method: 'PATCH', url: `/v1/order/${order.id}`, payload: { quantity: 2 } })).statusCode,
    ).toBe(404)
    const theirs = (await other({ method: 'GET', url: '/v1/order?limit=100' })).json()
    expect(theirs.data).toEqual([])
    expect((await call({ method: 'GET', url: `/v1/order/${order.id}` })).json()).toEqual(order)
  })

  it('keeps an order when its pet is deleted (the record of the order stays, its pet_id dangling)', async () => {
    const doomed = await newPet(call, 'Gone')
    const order = await createOrder({ pet_id: String(doomed) })
    expect((await call({ method: 'DELETE', url: `/v1/pet/${doomed}` })).statusCode).toBe(200)
    const kept = await call({ method: 'GET', url: `/v1/order/${order.id}` })
    expect(kept.json()).toEqual(order)
    // Other fields still change; the pet rule holds only for a new pet_id.
    const patched = await call({
      method: 'PATCH',
      url: `/v1/order/${order.id}`,
      payload: { status: 'delivered' },
    })
    expect(patched.json()).toMatchObject({ pet_id: doomed, status: 'delivered' })
  })

  it('needs read:orders and write:orders on restricted keys', async () => {
    const readOnly = withKey(t.app, (await t.newAccount({ scopes: ['read:orders'] })).apiKey)
    expect((await readOnly({ method: 'GET', url: '/v1/order' })).statusCode).toBe(200)
    const write = await readOnly({ method: 'POST', url: '/v1/order', payload: { pet_id: 1 } })
    expect(write.statusCode).toBe(403)
    expect(write.json()).toMatchObject({ code: 'insufficient_scope', required_scope: 'write:orders' })
    const petsOnly = withKey(t.app, (await t.newAccount({ scopes: ['read:pets'] })).apiKey)
    expect((await petsOnly({ method: 'GET', url: '/v1/order' })).statusCode).toBe(403)
  })

  it('replays a create with the same Idempotency-Key', async () => {
    const key = `order-${Date.now()}`
    const first = await call({
      method: 'POST',
      url: '/v1/order',
      headers: { 'idempotency-key': key },
      payload: { pet_id: pet },
    })
    const again = await call({
      method: 'POST',
      url: '/v1/order',
      headers: { 'idempotency-key': key },
      payload: { pet_id: pet },
    })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    const list = (await call({ method: 'GET', url: '/v1/order?limit=100' })).json()
    expect(list.data.filter((o: { id: number }) => o.id === first.json().id)).toHaveLength(1)
  })
})
