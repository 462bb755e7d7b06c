import { expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, newClient } from '../../helpers/oauth.ts'

describeDb('v2 bearer authentication under guessing', () => {
  const t = useTestApp()

  it('answers 429 with Retry-After once an address has failed too often, and still serves valid tokens', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 35; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/v2/store/inventory',
        headers: bearer(`guess-${i}`),
      })
      statuses.push(res.statusCode)
      if (res.statusCode === 429) {
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
        expect(res.json().code).toBe('rate_limited')
      }
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.at(-1)).toBe(429)
    const token = await accessToken(t.app, await newClient(t))
    expect(
      (await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })).statusCode,
    ).toBe(200)
  })
})
