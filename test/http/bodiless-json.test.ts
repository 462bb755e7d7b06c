import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

/**
 * Some generated clients (the Petstore's Perl and Java ones) send `Content-Type: application/json`
 * on every request, a DELETE with an empty body included: that is no malformed JSON.
 */
describeDb('a DELETE with Content-Type: application/json and no body', () => {
  let v1: Record<string, string>
  let v2: Record<string, string>

  const t = useTestApp()
  beforeAll(async () => {
    const client = await newClient(t)
    v1 = bearer(client.apiKey)
    v2 = bearer(await accessToken(t.app, client))
  })

  const create = async (url: string, headers: Record<string, string>, payload: object) => {
    const res = await t.app.inject({ method: 'POST', url, headers, payload })
    expect(res.statusCode, res.body).toBeLessThan(300)
    return res.json() as { id: number | string; username?: string }
  }
  const bodilessDelete = (url: string, headers: Record<string, string>) =>
    t.app.inject({
      method: 'DELETE',
      url,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': '0' },
      payload: '',
    })

  it('deletes a pet on v2 and on v1', async () => {
    const one = await create('/v2/pet', v2, { name: 'a', photoUrls: [] })
    const two = await create('/v1/pet', v1, { name: 'b' })
    const v2Delete = await bodilessDelete(`/v2/pet/${one.id}`, v2)
    expect(v2Delete.statusCode, v2Delete.body).toBe(200)
    const v1Delete = await bodilessDelete(`/v1/pet/${two.id}`, v1)
    expect(v1Delete.statusCode, v1Delete.body).toBe(200)
    expect((await t.app.inject({ method: 'GET', url: `/v1/pet/${two.id}`, headers: v1 })).statusCode).toBe(
      404,
    )
  })

  it('deletes a user on v2 and on v1', async () => {
    const one = await create('/v2/user', v2, { username: 'bodiless', firstName: 'B' })
    const two = await create('/v1/user', v1, { name: 'Bo' })
    const v2Delete = await bodilessDelete(`/v2/user/${one.username}`, v2)
    expect(v2Delete.statusCode, v2Delete.body).toBe(200)
    const v1Delete = await bodilessDelete(`/v1/user/${two.id}`, v1)
    expect(v1Delete.statusCode, v1Delete.body).toBe(200)
    expect((await t.app.inject({ method: 'GET', url: '/v2/user/bodiless', headers: v2 })).statusCode).toBe(
      404,
    )
  })

  it('still refuses an empty JSON body where one is needed (POST): 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: { ...v2, 'content-type': 'application/json', 'content-length': '0' },
      payload: '',
    })
    expect(res.statusCode).toBe(400)
  })
})
