import { beforeAll, expect, it } from 'vitest'
import { basic, useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

const STATUSES = ['placed', 'approved', 'delivered'] as const

describeDb('dashboard orders pages', () => {
  let session: SessionClient
  let key = ''
  const petIds: number[] = []
  const orderIds: number[] = []

  const api = (method: 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.app.inject({
      method,
      url,
      ...(payload === undefined ? {} : { payload }),
      headers: { authorization: basic(key) },
    })

  const t = useTestApp()
  beforeAll(async () => {
    session = new SessionClient(t.app)
    await session.signUp(`orders-${Date.now()}@example.com`)
    key = await session.createKey('Store', ['read:pets', 'write:pets', 'read:orders', 'write:orders'])
    for (const name of ['Rex', 'Tom']) {
      const pet = await api('POST', '/v1/pet', { name })
      expect(pet.statusCode).toBe(201)
      petIds.push((pet.json() as { id: number }).id)
    }
    for (let i = 1; i <= 25; i++) {
      const order = await api('POST', '/v1/order', {
        pet_id: petIds[i % 2]!,
        quantity: i,
        status: STATUSES[i % 3],
      })
      expect(order.statusCode).toBe(201)
      orderIds.push((order.json() as { id: number }).id)
    }
  })

  /** The order ids of a list page, top to bottom. */
  const ids = (body: string) =>
    [...body.matchAll(/<a class="mono" href="\/dashboard\/orders\/(\d+)">/g)].map((m) => Number(m[1]))
  const link = (body: string, rel: 'next' | 'prev') =>
    new RegExp(`href="([^"]*)" rel="${rel}"`).exec(body)?.[1]?.replaceAll('&amp;', '&')

  it('is linked from the navigation of every page', async () => {
    const overview = await session.get('/dashboard')
    expect(overview.body).toContain('<a href="/dashboard/orders">')
    const orders = await session.get('/dashboard/orders')
    expect(orders.statusCode).toBe(200)
    expect(orders.body).toContain('<a href="/dashboard/orders" aria-current="page">')
  })

  it('pages through the orders twenty at a time, newest first, and back', async () => {
    const newestFirst = [...orderIds].reverse()
    const first = await session.get('/dashboard/orders')
    expect(ids(first.body)).toEqual(newestFirst.slice(0, 20))
    const second = await session.get(link(first.body, 'next')!)
    expect(ids(second.body)).toEqual(newestFirst.slice(20))
    expect(second.body).toMatch(/aria-disabled="true">Older/)
    const back = await session.get(link(second.body, 'prev')!)
    expect(ids(back.body)).toEqual(newestFirst.slice(0, 20))
  })

  it('filters the orders by status and by pet, and keeps the filters while paging', async () => {
    const newestFirst = [...orderIds].reverse()
    const placed = await session.get('/dashboard/orders?status=placed')
    expect(ids(placed.body)).toEqual(newestFirst.filter((id) => orderIds.indexOf(id) % 3 === 2))
    const ofRex = await session.get(`/dashboard/orders?pet=${petIds[0]}`)
    expect(ids(ofRex.body)).toEqual(newestFirst.filter((id) => (orderIds.indexOf(id) + 1) % 2 === 0))
    expect(ofRex.body).toContain('>Rex</a>')
    expect(ofRex.body).not.toContain('>Tom</a>')
    // The pet's page links to its orders.
    expect((await session.get(`/dashboard/pets/${petIds[0]}`)).body).toContain(
      `<a href="/dashboard/orders?pet=${petIds[0]}">Orders of Rex</a>`,
    )
    const both = await session.get(`/dashboard/orders?status=approved&pet=${petIds[1]}`)
    expect(ids(both.body)).toEqual(
      newestFirst.filter((id) => {
        const i = orderIds.indexOf(id) + 1
        return i % 3 === 1 && i % 2 === 1
      }),
    )
    // An unknown status or a pet id that is not a number is no filter at all; a stale cursor
    // (an order deleted since) shows the first page.
    expect(ids((await session.get('/dashboard/orders?status=lost&pet=rex')).body)).toHaveLength(20)
    const stale = await session.get('/dashboard/orders?starting_after=999999')
    expect(stale.statusCode).toBe(200)
    expect(ids(stale.body)).toEqual(newestFirst.slice(0, 20))
  })

  it('shows an order with its pet, and its JSON as the API answers it', async () => {
    const id = orderIds[0]!
    const page = await session.get(`/dashboard/orders/${id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<a href="/dashboard/pets/${petIds[1]}">Tom</a>`)
    const json = /<pre data-testid="order-json"><code>([\s\S]*?)<\/code><\/pre>/.exec(page.body)?.[1]
    const fromApi = (
      await t.app.inject({ url: `/v1/order/${id}`, headers: { authorization: basic(key) } })
    ).json()
    expect(JSON.parse(json!.replaceAll('&quot;', '"'))).toEqual(fromApi)
    expect((await session.get('/dashboard/orders/999999')).statusCode).toBe(404)
    expect((await session.get('/dashboard/orders/not-a-number')).statusCode).toBe(404)
  })

  it('says a deleted pet is deleted, and keeps its orders', async () => {
    const extra = await api('POST', '/v1/pet', { name: 'Goldie' })
    const petId = (extra.json() as { id: number }).id
    const order = (await api('POST', '/v1/order', { pet_id: petId })).json() as { id: number }
    expect((await api('DELETE', `/v1/pet/${petId}`)).statusCode).toBe(200)
    const page = await session.get(`/dashboard/orders/${order.id}`)
    expect(page.body).toContain(`#${petId}</span><span class="sub">deleted</span>`)
  })

  it('never shows another account’s orders, in the list or by id', async () => {
    const other = await newClient(t, { scopes: ['read:pets', 'write:pets', 'read:orders', 'write:orders'] })
    const token = await accessToken(t.app, other)
    const pet = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(token),
      payload: { name: 'Theirs', photoUrls: [] },
    })
    expect(pet.statusCode).toBe(200)
    const theirs = await t.app.inject({
      method: 'POST',
      url: '/v2/store/order',
      headers: bearer(token),
      payload: { id: 987654, petId: (pet.json() as { id: number }).id, quantity: 777 },
    })
    expect(theirs.statusCode).toBe(200)
    for (const url of [
      '/dashboard/orders',
      '/dashboard/orders?status=placed',
      `/dashboard/orders?pet=${petIds[0]}`,
    ]) {
      const page = await session.get(url)
      expect(ids(page.body).length, url).toBeGreaterThan(0)
      expect(ids(page.body), url).not.toContain(987654)
      expect(page.body, url).not.toContain('Theirs')
    }
    expect((await session.get('/dashboard/orders/987654')).statusCode).toBe(404)
  })
})
