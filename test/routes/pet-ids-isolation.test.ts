import { expect, it } from 'vitest'
import { createTestApp, type TestApp, useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

/** Pet ids are per account (src/db/account-ids.ts): two accounts' pet 7 are two pets, on v1 and v2. */
describeDb('per-account pet ids: isolation', () => {
  async function account(app: TestApp = t) {
    const client = await newClient(app)
    const token = await accessToken(app.app, client)
    const v2 = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      app.app.inject({ method, url, headers: bearer(token), ...(payload && { payload }) })
    const v1 = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
      app.app.inject({ method, url, headers: bearer(client.apiKey), ...(payload && { payload }) })
    return { ...client, v1, v2 }
  }

  const t = useTestApp()

  it('keeps account A’s pet 7 and account B’s pet 7 apart in every operation', async () => {
    const [a, b] = [await account(), await account()]
    const made = await Promise.all([
      a.v2('POST', '/v2/pet', { id: 7, name: 'A7', photoUrls: [], status: 'pending', tags: [{ name: 'x' }] }),
      b.v2('POST', '/v2/pet', { id: 7, name: 'B7', photoUrls: [], status: 'pending', tags: [{ name: 'x' }] }),
    ])
    for (const res of made) expect(res.statusCode, res.body).toBe(200)

    for (const [who, name] of [
      [a, 'A7'],
      [b, 'B7'],
    ] as const) {
      expect((await who.v2('GET', '/v2/pet/7')).json()).toMatchObject({ id: 7, name })
      expect((await who.v1('GET', '/v1/pet/7')).json()).toMatchObject({ id: 7, name })
      const list = (await who.v1('GET', '/v1/pet')).json() as { data: { name: string }[] }
      expect(list.data.map((p) => p.name)).toEqual([name])
      const byStatus = (await who.v2('GET', '/v2/pet/findByStatus?status=pending')).json() as {
        name: string
      }[]
      expect(byStatus.map((p) => p.name)).toEqual([name])
      const byTags = (await who.v2('GET', '/v2/pet/findByTags?tags=x')).json() as { name: string }[]
      expect(byTags.map((p) => p.name)).toEqual([name])
      expect((await who.v2('GET', '/v2/store/inventory')).json()).toMatchObject({ pending: 1 })
    }

    // B replaces, updates and deletes its pet 7; A's does not move.
    expect((await b.v2('POST', '/v2/pet', { id: 7, name: 'B7 again', photoUrls: [] })).statusCode).toBe(200)
    expect((await b.v2('PUT', '/v2/pet', { id: 7, name: 'B7 put', photoUrls: [] })).statusCode).toBe(200)
    expect((await b.v1('DELETE', '/v1/pet/7')).statusCode).toBe(200)
    expect((await b.v2('GET', '/v2/pet/7')).statusCode).toBe(404)
    expect((await b.v2('DELETE', '/v2/pet/7')).statusCode).toBe(404)
    const kept = await a.v2('GET', '/v2/pet/7')
    expect(kept.json()).toMatchObject({ id: 7, name: 'A7', status: 'pending' })
    expect(kept.headers.etag).toBe('"1"')

    // Each account's events tell of its own pet only.
    const eventsOf = async (who: typeof a) =>
      (
        (await who.v1('GET', '/v1/event?limit=100')).json() as {
          data: { data: { object: { name: string } } }[]
        }
      ).data.map((e) => e.data.object.name)
    expect(await eventsOf(a)).toEqual(['A7'])
    expect(await eventsOf(b)).toEqual(['B7 put', 'B7 put', 'B7 again', 'B7'])
  })

  it('assigns ids from 1 in a new account, whatever other accounts did', async () => {
    const busy = await account()
    for (let i = 0; i < 5; i++)
      expect((await busy.v1('POST', '/v1/pet', { name: `p${i}` })).statusCode).toBe(201)
    const fresh = await account()
    const v1 = await fresh.v1('POST', '/v1/pet', { name: 'first' })
    expect(v1.json().id).toBe(1)
    expect(v1.headers.location).toBe('/v1/pet/1')
    expect((await fresh.v2('POST', '/v2/pet', { name: 'second', photoUrls: [] })).json().id).toBe(2)
  })

  it('lists v1 pets newest first by creation, whatever their ids, and pages by them', async () => {
    const a = await account()
    for (const id of [100, undefined, 50]) {
      const res = await a.v2('POST', '/v2/pet', {
        ...(id && { id }),
        name: `n${id ?? 'assigned'}`,
        photoUrls: [],
      })
      expect(res.statusCode).toBe(200)
    }
    const page = (await a.v1('GET', '/v1/pet')).json() as { data: { id: number; name: string }[] }
    expect(page.data.map((p) => p.name)).toEqual(['n50', 'nassigned', 'n100'])
    const assigned = page.data[1]!.id
    const after = (await a.v1('GET', `/v1/pet?limit=1&starting_after=${assigned}`)).json() as {
      data: { id: number }[]
    }
    expect(after.data.map((p) => p.id)).toEqual([100])
    const before = (await a.v1('GET', `/v1/pet?ending_before=${assigned}`)).json() as {
      data: { id: number }[]
    }
    expect(before.data.map((p) => p.id)).toEqual([50])
    // Another account's pet 50 is no cursor here.
    const b = await account()
    expect((await b.v1('GET', '/v1/pet?starting_after=50')).json()).toMatchObject({ code: 'invalid_cursor' })
  })

  it('never gives one id twice when two instances create at once', { timeout: 120_000 }, async () => {
    // A second instance with a database handle (and so an id allocator) of its own.
    const handle = t.database.reopen()
    const second = await createTestApp(
      {},
      { database: { ...handle, url: t.database.url, reopen: t.database.reopen, destroy: handle.close } },
    )
    try {
      const [a, b] = [await account(), await account()]
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const who = i % 4 < 2 ? a : b
          const app = i % 2 === 0 ? t.app : second.app
          return app.inject({
            method: 'POST',
            url: '/v1/pet',
            headers: bearer(who.apiKey),
            payload: { name: `p${i}` },
          })
        }),
      )
      for (const res of results) expect(res.statusCode, res.body).toBe(201)
      for (const who of [a, b]) {
        const ids = results
          .filter((_, i) => (i % 4 < 2 ? a : b) === who)
          .map((res) => res.json().id as number)
        expect(new Set(ids).size).toBe(ids.length)
        const listed = (await who.v1('GET', '/v1/pet?limit=100')).json() as { data: { id: number }[] }
        expect(listed.data.map((p) => p.id).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y))
      }
    } finally {
      await second.close()
      await handle.close()
    }
  })
})
