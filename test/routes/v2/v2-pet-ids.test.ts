import { expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient } from '../../helpers/oauth.ts'

describeDb('v2 pets: client-chosen ids (POST /v2/pet with an id)', () => {
  /** A new account and a function calling v2 as it. */
  async function account() {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers = {}) =>
      t.app.inject({
        method,
        url,
        headers: { ...bearer(token), ...headers },
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
    const add = async (body: Record<string, unknown> = {}) => {
      const res = await call('POST', '/v2/pet', { name: 'doggie', photoUrls: [], ...body })
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as { id: number; name: string; status?: string }
    }
    const events = async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/event?limit=100',
        headers: { authorization: `Bearer ${client.apiKey}` },
      })
      expect(res.statusCode, res.body).toBe(200)
      return (res.json() as { data: { type: string; data: { object: { id: number; name: string } } }[] }).data
    }
    return { ...client, call, add, events }
  }

  const t = useTestApp()

  it('creates the pet with the id sent, and replaces it when the same id is sent again', async () => {
    const a = await account()
    const first = await a.call('POST', '/v2/pet', { id: 7, name: 'Rex', photoUrls: [], status: 'available' })
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toEqual({ id: 7, name: 'Rex', photoUrls: [], status: 'available' })
    expect(first.headers.etag).toBe('"1"')

    const again = await a.call('POST', '/v2/pet', { id: 7, name: 'Max', photoUrls: ['https://x/1.jpg'] })
    expect(again.statusCode, again.body).toBe(200)
    // A full replace, as PUT: the status left out is left out of the v2 view again.
    expect(again.json()).toEqual({ id: 7, name: 'Max', photoUrls: ['https://x/1.jpg'] })
    expect(again.headers.etag).toBe('"2"')
    expect((await a.call('GET', '/v2/pet/7')).json()).toEqual(again.json())

    const events = await a.events()
    expect(events.map((e) => e.type)).toEqual(['pet.updated', 'pet.created'])
    expect(events[0]).toMatchObject({
      data: { object: { id: 7, name: 'Max' }, previous_attributes: { name: 'Rex', photo_urls: [] } },
    })
  })

  it('assigns ids from 1 in every new account, past the ids clients chose', async () => {
    const a = await account()
    expect((await a.add()).id).toBe(1)
    expect((await a.add({ id: null })).id).toBe(2)
    for (const id of [3, 4]) expect((await a.add({ id })).id).toBe(id)
    const assigned = (await a.add()).id
    expect([1, 2, 3, 4]).not.toContain(assigned)
    const b = await account()
    expect((await b.add()).id).toBe(1)
  })

  it.each([
    ['zero', '0'],
    ['negative', '-1'],
    ['2^53', '9007199254740992'],
    ['int64 max', '9223372036854775807'],
    ['past int64', '9223372036854775808'],
    ['a fraction', '1.5'],
    ['a string', '"12"'],
    ['a boolean', 'true'],
  ])(
    'answers 400 "Invalid ID supplied" naming the range for an id that is %s, and stores nothing',
    async (_, id) => {
      const a = await account()
      const res = await a.call('POST', '/v2/pet', `{"id":${id},"name":"x","photoUrls":[]}`, {
        'content-type': 'application/json',
      })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json()).toMatchObject({ title: 'Invalid ID supplied', code: 'invalid_id' })
      expect(res.json().detail).toContain('from 1 to 9007199254740991')
      expect(await a.events()).toEqual([])
    },
  )

  it('takes the highest id (2^53 − 1), exactly', async () => {
    const a = await account()
    const res = await a.call('POST', '/v2/pet', { id: Number.MAX_SAFE_INTEGER, name: 'Top', photoUrls: [] })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().id).toBe(Number.MAX_SAFE_INTEGER)
    // The counter is not pushed past it: assigned ids still start at 1.
    expect((await a.add()).id).toBe(1)
  })

  it('applies the rules of PUT to a replace: a sold pet stays sold (409), an unknown owner is refused', async () => {
    const a = await account()
    await a.add({ id: 40, status: 'sold' })
    const res = await a.call('POST', '/v2/pet', { id: 40, name: 'Again', photoUrls: [], status: 'available' })
    expect(res.statusCode, res.body).toBe(409)
    expect((await a.call('GET', '/v2/pet/40')).json()).toMatchObject({ name: 'doggie', status: 'sold' })
    const owner = await a.call('POST', '/v2/pet', { id: 41, name: 'x', photoUrls: [], ownerId: 'usr_nobody' })
    expect(owner.statusCode).toBe(400)
    expect(owner.json()).toMatchObject({ code: 'owner_not_found' })
    expect((await a.call('GET', '/v2/pet/41')).statusCode).toBe(404)
  })

  it('keeps PUT of an unknown id a 404 (PUT never creates)', async () => {
    const a = await account()
    const res = await a.call('PUT', '/v2/pet', { id: 55, name: 'x', photoUrls: [] })
    expect(res.statusCode).toBe(404)
    expect((await a.call('GET', '/v2/pet/55')).statusCode).toBe(404)
  })

  it('replays a create with an id under the same Idempotency-Key, changing nothing the second time', async () => {
    const a = await account()
    const body = { id: 60, name: 'Once', photoUrls: [] }
    const key = { 'idempotency-key': 'same-key-60' }
    const first = await a.call('POST', '/v2/pet', body, key)
    const second = await a.call('POST', '/v2/pet', body, key)
    expect(second.statusCode).toBe(200)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(second.json()).toEqual(first.json())
    expect((await a.events()).map((e) => e.type)).toEqual(['pet.created'])
  })

  it('still creates a pet when the account chose the highest id and the starts of the next ten blocks', async () => {
    // The review's reproduction: near 2^53 − 1 no block fits past the highest id, so blocks of
    // 64 start at 1, 65, 129, … and a client that takes those used to make the next create a 500.
    const a = await account()
    await a.add({ id: Number.MAX_SAFE_INTEGER })
    for (let block = 0; block < 10; block++) await a.add({ id: 1 + 64 * block })
    const assigned = await a.add()
    expect(assigned.id).toBe(2)
  })
})
