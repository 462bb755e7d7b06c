import { beforeAll, expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('v1 pet lists', () => {
  let call: ReturnType<typeof withKey>
  const created: number[] = []

  const t = useTestApp()
  beforeAll(async () => {
    call = withKey(t.app, (await t.newAccount()).apiKey)
    for (let i = 0; i < 25; i++) {
      const species = i % 2 === 0 ? 'dog' : 'cat'
      const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: `P${i}`, species }) })
      created.push(res.json().id)
    }
  })

  const ids = (body: { data: { id: number }[] }) => body.data.map((p) => p.id)

  it('pages through more than three pages with no duplicate and no gap while pets are being created', async () => {
    const seen: number[] = []
    let cursor: number | undefined
    let pages = 0
    let inserts: Promise<unknown>[] = []
    for (;;) {
      // Other writers add pets while we page: they must not disturb the pages still to come.
      inserts.push(call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Concurrent', species: 'dog' }) }))
      const url = `/v1/pet?limit=4${cursor === undefined ? '' : `&starting_after=${cursor}`}`
      const [page] = await Promise.all([call({ method: 'GET', url }), ...inserts])
      inserts = []
      const body = page.json()
      seen.push(...ids(body))
      pages++
      if (!body.has_more) break
      cursor = body.data.at(-1).id
    }
    expect(pages).toBeGreaterThan(3)
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of created) expect(seen).toContain(id)
    expect([...seen].sort((a, b) => b - a)).toEqual(seen)
  })

  it('goes back with ending_before', async () => {
    const first = (await call({ method: 'GET', url: '/v1/pet?limit=3' })).json()
    const second = (
      await call({ method: 'GET', url: `/v1/pet?limit=3&starting_after=${first.data.at(-1).id}` })
    ).json()
    const back = (
      await call({ method: 'GET', url: `/v1/pet?limit=3&ending_before=${second.data[0].id}` })
    ).json()
    expect(ids(back)).toEqual(ids(first))
  })

  it('filters by status, species and owner', async () => {
    const user = (await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Owner' }) })).json()
    const owned = (
      await call({
        method: 'POST',
        url: '/v1/pet',
        ...form({ name: 'Owned', owner_id: user.id, status: 'pending' }),
      })
    ).json()
    const byOwner = (await call({ method: 'GET', url: `/v1/pet?owner_id=${user.id}` })).json()
    expect(ids(byOwner)).toEqual([owned.id])
    const pending = (await call({ method: 'GET', url: '/v1/pet?status=pending&limit=100' })).json()
    expect(pending.data.every((p: { status: string }) => p.status === 'pending')).toBe(true)
    expect(ids(pending)).toContain(owned.id)
    const cats = (await call({ method: 'GET', url: '/v1/pet?species=cat&limit=100' })).json()
    expect(cats.data.length).toBe(12)
    expect(cats.data.every((p: { species: string }) => p.species === 'cat')).toBe(true)
  })

  it('refuses bad list parameters with 400 naming them', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['starting_after=x', 'starting_after'],
      ['status=lost', 'status'],
      ['colour=red', 'colour'],
      ['starting_after=5&ending_before=9', 'ending_before'],
    ]) {
      const res = await call({ method: 'GET', url: `/v1/pet?${query}` })
      expect(res.statusCode, query).toBe(400)
      expect(res.json().param, query).toBe(param)
    }
  })
})
