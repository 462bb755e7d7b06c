import { afterAll, beforeAll, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, clientBasic, newClient } from '../helpers/oauth.ts'

describeDb('errors and limits', () => {
  let t: TestApp
  let call: ReturnType<typeof withKey>
  let accountId: string

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT_BYTES: '4096' })
    const account = await t.newAccount()
    accountId = account.accountId
    call = withKey(t.app, account.apiKey)
  })
  afterAll(() => t.close())

  const petCount = async () =>
    (await t.database.db.selectFrom('pets').select('id').where('account_id', '=', accountId).execute()).length

  it('says to set Content-Type: application/json when JSON arrives as form fields (curl -d without -H)', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: '{"name":"Rex","species":"dog"}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toContain("-H 'Content-Type: application/json'")
    expect(await petCount()).toBe(0)
  })

  it('says which credential v1 takes when it is sent an OAuth access token or client credentials', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/pet',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_invalid')
    expect(res.json().detail).toMatch(/OAuth access token.*v1 API takes an API key \(pet_sk_…\).*\/v2/)
    const secret = await t.app.inject({
      method: 'GET',
      url: '/v1/pet',
      headers: { authorization: clientBasic(client.clientId, client.clientSecret) },
    })
    expect(secret.json().detail).toMatch(/OAuth client id.*v1 API takes an API key/)
  })

  it('says which credential v2 takes when it is sent an API key as a bearer token', async () => {
    const { apiKey } = await t.newAccount()
    const res = await t.app.inject({
      method: 'GET',
      url: '/v2/pet/1',
      headers: { authorization: `Bearer ${apiKey}` },
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('token_invalid')
    expect(res.json().detail).toMatch(/API key.*v2 API takes an OAuth access token.*POST \/oauth\/token/)
    expect(res.json().detail).not.toContain(apiKey)
  })

  it('answers 413 to a body over the limit', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: { name: 'x', breed: 'y'.repeat(5000) },
    })
    expect(res.statusCode).toBe(413)
    expect(res.json().code).toBe('body_too_large')
  })

  it('answers 415 to a content type other than JSON or form', async () => {
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await call({
        method: 'POST',
        url: '/v1/pet',
        payload: 'name=Rex',
        headers: { 'content-type': type },
      })
      expect(res.statusCode, type).toBe(415)
      expect(res.json().code).toBe('unsupported_media_type')
    }
  })

  it('answers 400 to malformed JSON, an empty JSON body and a non-object body', async () => {
    for (const payload of ['{"name": "Rex"', '', '[1,2]', '"Rex"', 'null']) {
      const res = await call({
        method: 'POST',
        url: '/v1/pet',
        payload,
        headers: { 'content-type': 'application/json' },
      })
      expect(res.statusCode, payload).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json().detail.length).toBeGreaterThan(10)
    }
  })

  it('answers hostile and odd input with a 4xx problem, never a 5xx, and creates nothing', async () => {
    const before = await petCount()
    const cases: Parameters<typeof call>[0][] = [
      { method: 'POST', url: '/v1/pet', payload: { name: { $gt: '' } } },
      { method: 'POST', url: '/v1/pet', payload: { name: ['a', 'b'] } },
      {
        method: 'POST',
        url: '/v1/pet',
        payload: '{"__proto__":{"admin":true},"name":"x"}',
        headers: { 'content-type': 'application/json' },
      },
      {
        method: 'POST',
        url: '/v1/pet',
        payload: 'name=a&name=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      {
        method: 'POST',
        url: '/v1/pet',
        payload: '%%%',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      {
        method: 'POST',
        url: '/v1/pet',
        payload: { name: 'x', status: 'sold', owner_id: "'; drop table pets; --" },
      },
      { method: 'GET', url: '/v1/pet/%E0%A4%A' },
      { method: 'GET', url: `/v1/pet/${'9'.repeat(400)}` },
      { method: 'GET', url: '/v1/pet?limit=1e9' },
      { method: 'GET', url: '/v1/pet?status[]=x' },
      { method: 'PATCH', url: '/v1/pet/1', payload: { version: 7 } },
      { method: 'PATCH', url: '/v1/pet/1', payload: {}, headers: { 'if-match': 'garbage' } },
      { method: 'PUT', url: '/v1/pet/1', payload: {} },
    ]
    for (const c of cases) {
      const res = await call(c)
      expect(res.statusCode, `${c.method} ${c.url} ${String(c.payload)}`).toBeGreaterThanOrEqual(400)
      expect(res.statusCode, `${c.method} ${c.url}`).toBeLessThan(500)
      expect(res.headers['content-type'], `${c.method} ${c.url}`).toContain('application/problem+json')
      expect(res.body).not.toMatch(/at .*\.ts:\d+/)
    }
    expect(await petCount()).toBe(before)
  })

  it('answers an unknown route with a 404 problem and a Request-Id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ code: 'not_found', status: 404 })
    expect(res.headers['request-id']).toMatch(/^req_/)
  })

  it('keeps a well-formed Request-Id sent by the caller', async () => {
    const res = await call({ method: 'GET', url: '/v1/pet', headers: { 'request-id': 'trace-abc.123' } })
    expect(res.headers['request-id']).toBe('trace-abc.123')
  })

  it('describes every problem type at /problems/{code}', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/problems/parameter_unknown' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ code: 'parameter_unknown', status: 400 })
  })
})

describeDb('per-account rate limit', () => {
  it('answers 429 with Retry-After and RateLimit fields once the burst is spent, per account', async () => {
    const t = await createTestApp({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' })
    try {
      const { apiKey } = await t.newAccount()
      const get = (key: string) =>
        t.app.inject({ method: 'GET', url: '/v1/pet', headers: { authorization: basic(key) } })
      // Spend the burst: the first three pass; the bucket refills one a second, so on a slow
      // machine a few more may pass before the refusal, never more than the time allows.
      const started = Date.now()
      const statuses: number[] = []
      let limited: Awaited<ReturnType<typeof get>> | undefined
      while (limited === undefined && statuses.length < 50) {
        const res = await get(apiKey)
        statuses.push(res.statusCode)
        if (res.statusCode === 429) limited = res
      }
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200])
      expect(statuses.length - 1).toBeLessThanOrEqual(3 + Math.ceil((Date.now() - started) / 1000))
      expect(limited).toBeDefined()
      expect(limited!.json().code).toBe('rate_limited')
      expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(limited!.headers['ratelimit-policy']).toBe('"account";q=3;w=3')
      expect(limited!.headers.ratelimit).toMatch(/^"account";r=0;t=\d+$/)

      const other = await t.newAccount()
      expect((await get(other.apiKey)).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('turns off with RATE_LIMIT_RPS=0', async () => {
    const t = await createTestApp({ RATE_LIMIT_RPS: '0', RATE_LIMIT_BURST: '1' })
    try {
      const { apiKey } = await t.newAccount()
      for (let i = 0; i < 5; i++) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/v1/pet',
          headers: { authorization: basic(apiKey) },
        })
        expect(res.statusCode).toBe(200)
        expect(res.headers.ratelimit).toBeUndefined()
      }
    } finally {
      await t.close()
    }
  })
})
