import { beforeAll, describe, expect, it } from 'vitest'
import { useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../../helpers/oauth.ts'

describeDb('v2 store orders (Petstore placeOrder, getOrderById, deleteOrder)', () => {
  let a: TestClient
  let tokenA: string
  let b: TestClient
  let tokenB: string
  let petA: number
  let petB: number

  const call = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  const newPet = async (token: string, name: string, id?: number): Promise<number> => {
    const res = await call(token, 'POST', '/v2/pet', { id, name, photoUrls: [] })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().id
  }

  const t = useTestApp()
  beforeAll(async () => {
    a = await newClient(t)
    b = await newClient(t)
    tokenA = await accessToken(t.app, a)
    tokenB = await accessToken(t.app, b)
    petA = await newPet(tokenA, 'Rex')
    // An id only B has (pet ids are per account: both have a pet 1).
    petB = await newPet(tokenB, 'Tom', 4242)
  })

  it('places an order with its own id and reads it back exactly as sent', async () => {
    const order = {
      id: 10,
      petId: petA,
      quantity: 2,
      shipDate: '2026-11-24T12:00:00.000+01:00',
      status: 'approved',
      complete: true,
    }
    const res = await call(tokenA, 'POST', '/v2/store/order', order)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual(order)
    expect(res.headers.location).toBe('/v2/store/order/10')
    expect(res.headers.etag).toBe('"1"')
    const got = await call(tokenA, 'GET', '/v2/store/order/10')
    expect(got.statusCode).toBe(200)
    expect(got.json()).toEqual(order)
  })

  it('assigns an id when none is sent, and fills in the defaults', async () => {
    for (const id of [undefined, null]) {
      const res = await call(tokenA, 'POST', '/v2/store/order', { id, petId: petA })
      expect(res.statusCode, res.body).toBe(200)
      const order = res.json()
      expect(order).toEqual({ id: order.id, petId: petA, quantity: 1, status: 'placed', complete: false })
      expect(Number.isSafeInteger(order.id) && order.id >= 1).toBe(true)
    }
  })

  it('replaces the account’s order when its id is posted again (fields left out take their defaults)', async () => {
    await call(tokenA, 'POST', '/v2/store/order', {
      id: 20,
      petId: petA,
      quantity: 5,
      shipDate: '2026-12-01T00:00:00Z',
    })
    const res = await call(tokenA, 'POST', '/v2/store/order', { id: 20, petId: petA, status: 'delivered' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ id: 20, petId: petA, quantity: 1, status: 'delivered', complete: false })
    expect(res.headers.etag).toBe('"2"')
    expect((await call(tokenA, 'GET', '/v2/store/order/20')).json().status).toBe('delivered')
  })

  it('refuses a petId that is not a pet of the account: 400 "Invalid Order" naming petId', async () => {
    for (const petId of [petB, 99_999_999]) {
      const res = await call(tokenA, 'POST', '/v2/store/order', { id: 30, petId })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json()).toMatchObject({
        title: 'Invalid Order',
        code: 'order_pet_not_found',
        param: 'petId',
      })
    }
    // A failed request changes nothing.
    expect((await call(tokenA, 'GET', '/v2/store/order/30')).statusCode).toBe(404)
  })

  it('answers 400 "Invalid Order" naming every field at fault', async () => {
    const res = await call(tokenA, 'POST', '/v2/store/order', {
      petId: petA,
      quantity: 0,
      shipDate: 'tomorrow',
      status: 'shipped',
      complete: 'yes',
      colour: 'red',
    })
    expect(res.statusCode, res.body).toBe(400)
    const problem = res.json()
    expect(problem).toMatchObject({ title: 'Invalid Order', code: 'invalid_order' })
    expect(problem.errors.map((e: { param: string }) => e.param).sort()).toEqual(
      ['colour', 'complete', 'quantity', 'shipDate', 'status'].sort(),
    )
    const missing = await call(tokenA, 'POST', '/v2/store/order', { quantity: 1 })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ code: 'invalid_order', param: 'petId' })
    const noZone = await call(tokenA, 'POST', '/v2/store/order', {
      petId: petA,
      shipDate: '2026-11-24T12:00:00',
    })
    expect(noZone.json()).toMatchObject({ code: 'invalid_order', param: 'shipDate' })
  })

  it('takes JSON only: a form body is 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/store/order',
      headers: { ...bearer(tokenA), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `petId=${petA}`,
    })
    expect(res.statusCode).toBe(415)
    expect(res.json()).toMatchObject({ code: 'unsupported_media_type' })
  })

  it('takes null as absent on every optional field', async () => {
    const res = await call(tokenA, 'POST', '/v2/store/order', {
      id: null,
      petId: petA,
      quantity: null,
      shipDate: null,
      status: null,
      complete: null,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ petId: petA, quantity: 1, status: 'placed', complete: false })
    expect(res.json()).not.toHaveProperty('shipDate')
  })

  it('answers 400 "Invalid ID supplied" for an id outside 1…2^53−1 or not an integer, and changes nothing', async () => {
    for (const id of [0, -1, 2 ** 53, 1.5, '12', '9223372036854775808']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/store/order',
        headers: { ...bearer(tokenA), 'content-type': 'application/json' },
        payload: `{"id":${typeof id === 'string' && id.startsWith('9') ? id : JSON.stringify(id)},"petId":${petA}}`,
      })
      expect(res.statusCode, `${id}: ${res.body}`).toBe(400)
      expect(res.json()).toMatchObject({ code: 'invalid_id', param: 'id' })
    }
  })

  it('getOrderById and deleteOrder: 400 "Invalid ID supplied", 404 "Order not found"', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const bad = await call(tokenA, method, '/v2/store/order/abc')
      expect(bad.statusCode).toBe(400)
      expect(bad.json()).toMatchObject({ title: 'Invalid ID supplied' })
      const missing = await call(tokenA, method, '/v2/store/order/987654')
      expect(missing.statusCode).toBe(404)
      expect(missing.json()).toMatchObject({ title: 'Order not found', code: 'order_not_found' })
    }
  })

  it('deletes an order: ApiResponse, then 404', async () => {
    await call(tokenA, 'POST', '/v2/store/order', { id: 40, petId: petA })
    const res = await call(tokenA, 'DELETE', '/v2/store/order/40')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ code: 200, type: 'unknown', message: '40' })
    expect((await call(tokenA, 'GET', '/v2/store/order/40')).statusCode).toBe(404)
    expect((await call(tokenA, 'DELETE', '/v2/store/order/40')).statusCode).toBe(404)
  })

  describe('isolation', () => {
    it('keeps ids per account: A’s order 50 and B’s order 50 are two orders', async () => {
      const ofA = await call(tokenA, 'POST', '/v2/store/order', { id: 50, petId: petA, quantity: 3 })
      const ofB = await call(tokenB, 'POST', '/v2/store/order', { id: 50, petId: petB, quantity: 7 })
      expect([ofA.statusCode, ofB.statusCode]).toEqual([200, 200])
      expect((await call(tokenA, 'GET', '/v2/store/order/50')).json()).toMatchObject({
        petId: petA,
        quantity: 3,
      })
      expect((await call(tokenB, 'GET', '/v2/store/order/50')).json()).toMatchObject({
        petId: petB,
        quantity: 7,
      })
      expect((await call(tokenB, 'DELETE', '/v2/store/order/50')).statusCode).toBe(200)
      expect((await call(tokenA, 'GET', '/v2/store/order/50')).json()).toMatchObject({
        petId: petA,
        quantity: 3,
      })
    })

    it('B gets 404 for A’s order on get and delete, and posting its id creates B’s own', async () => {
      await call(tokenA, 'POST', '/v2/store/order', { id: 60, petId: petA, quantity: 4 })
      expect((await call(tokenB, 'GET', '/v2/store/order/60')).statusCode).toBe(404)
      expect((await call(tokenB, 'DELETE', '/v2/store/order/60')).statusCode).toBe(404)
      const own = await call(tokenB, 'POST', '/v2/store/order', { id: 60, petId: petB })
      expect(own.statusCode).toBe(200)
      expect((await call(tokenA, 'GET', '/v2/store/order/60')).json()).toMatchObject({
        petId: petA,
        quantity: 4,
      })
    })

    it('assigned ids count per account, from 1 for a new account', async () => {
      const c = await newClient(t)
      const token = await accessToken(t.app, c)
      const pet = await newPet(token, 'Kit')
      const first = (await call(token, 'POST', '/v2/store/order', { petId: pet })).json()
      const second = (await call(token, 'POST', '/v2/store/order', { petId: pet })).json()
      expect([first.id, second.id]).toEqual([1, 2])
      // A client may take the id the allocator would hand out next: it is skipped.
      const chosen = await call(token, 'POST', '/v2/store/order', { id: 3, petId: pet, quantity: 9 })
      expect(chosen.json()).toMatchObject({ id: 3, quantity: 9 })
      const third = (await call(token, 'POST', '/v2/store/order', { petId: pet })).json()
      expect(third.id).toBeGreaterThan(3)
      expect((await call(token, 'GET', '/v2/store/order/3')).json()).toMatchObject({ quantity: 9 })
    })
  })

  describe('authorisation', () => {
    it('answers 401 with a Bearer challenge and says how to send the token', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v2/store/order/1' })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Bearer')
      expect(res.json().detail).toContain('Authorization: Bearer')
    })

    it('needs read:orders to read and write:orders to place or delete (403 insufficient_scope)', async () => {
      const c = await newClient(t, { scopes: ['read:pets', 'write:pets', 'read:orders'] })
      const token = await accessToken(t.app, c)
      const pet = await newPet(token, 'Bo')
      const place = await call(token, 'POST', '/v2/store/order', { petId: pet })
      expect(place.statusCode).toBe(403)
      expect(place.headers['www-authenticate']).toContain('scope="write:orders"')
      expect((await call(token, 'GET', '/v2/store/order/1')).statusCode).toBe(404)
      const petsOnly = await accessToken(t.app, c, 'read:pets')
      expect((await call(petsOnly, 'GET', '/v2/store/order/1')).statusCode).toBe(403)
    })
  })

  it('is the same record on v1', async () => {
    await call(tokenA, 'POST', '/v2/store/order', { id: 70, petId: petA, quantity: 9, complete: true })
    const res = await withKey(t.app, a.apiKey)({ method: 'GET', url: '/v1/order/70' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      id: 70,
      object: 'order',
      pet_id: petA,
      quantity: 9,
      complete: true,
      ship_date: null,
    })
  })
})
