import { sql } from 'kysely'
import { beforeAll, expect, it } from 'vitest'
import { basic, form, useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

const NUL = '\u0000'

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400)
  expect(res.statusCode, res.body).toBeLessThan(500)
  expect(String(res.headers['content-type'])).toContain('application/problem+json')
  return JSON.parse(res.body) as {
    code: string
    param?: string
    detail: string
    errors?: { param: string }[]
  }
}

describeDb('bad input answers 4xx and changes nothing', () => {
  let token: string
  let apiKey: string
  let accountId: string

  const t = useTestApp()
  beforeAll(async () => {
    const client = await newClient(t)
    token = await accessToken(t.app, client)
    apiKey = client.apiKey
    accountId = client.accountId
  })

  const count = async (table: 'pets' | 'users' | 'accounts' | 'dashboard_sessions' | 'api_keys') =>
    Number(
      (
        await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(
          t.database.db,
        )
      ).rows[0]!.n,
    )

  const v1 = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: { authorization: basic(apiKey) },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
  const v2 = (method: 'POST' | 'PUT' | 'GET', url: string, payload?: string | object, headers = {}) =>
    t.app.inject({
      method,
      url,
      headers: { ...bearer(token), ...headers },
      ...(payload === undefined ? {} : { payload }),
    })

  it('refuses JSON nested 3,000 deep with 400, on v2 and v1, wherever the nesting is', async () => {
    const deep = `${'['.repeat(3000)}${']'.repeat(3000)}`
    const deepObject = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`
    const bodies = [
      deep,
      deepObject,
      `{"name":"x","photoUrls":${deep}}`,
      `{"name":"x","photoUrls":[],"category":${deepObject}}`,
      `{"name":"x","photoUrls":[],"extra":${deep}}`,
    ]
    const before = await count('pets')
    for (const body of bodies) {
      for (const res of [
        await v2('POST', '/v2/pet', body, { 'content-type': 'application/json' }),
        await v2('PUT', '/v2/pet', body, { 'content-type': 'application/json' }),
        await t.app.inject({
          method: 'POST',
          url: '/v1/pet',
          headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
          payload: body,
        }),
      ]) {
        const problem = expectProblem(res)
        expect(problem.detail.length).toBeGreaterThan(10)
      }
    }
    expect(await count('pets')).toBe(before)
  })

  it('refuses a body sent without Content-Type with 415 instead of ignoring it, and creates nothing', async () => {
    const users = await count('users')
    const pets = await count('pets')
    for (const res of [
      await t.app.inject({ method: 'POST', url: '/v2/user', headers: bearer(token), payload: 'username=x' }),
      await t.app.inject({
        method: 'POST',
        url: '/v1/pet',
        headers: { authorization: basic(apiKey) },
        payload: 'name=Rex',
      }),
    ]) {
      expect(expectProblem(res).code).toBe('unsupported_media_type')
      expect(res.statusCode).toBe(415)
    }
    expect(await count('users')).toBe(users)
    expect(await count('pets')).toBe(pets)
    // multipart/form-data is parsed only by the upload route; elsewhere it is not an empty body.
    for (const url of ['/v2/user', '/v2/pet', '/v2/pet/1']) {
      for (const type of ['multipart/form-data', 'multipart/form-data; boundary=x']) {
        const res = await v2(
          'POST',
          url,
          '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
          {
            'content-type': type,
          },
        )
        expect(res.statusCode, `${url} ${type}`).toBe(415)
        expect(expectProblem(res).code).toBe('unsupported_media_type')
      }
    }
    expect(await count('users')).toBe(users)
    // No body at all is still an empty form: "name is required".
    const empty = await t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      headers: { authorization: basic(apiKey) },
    })
    expect(expectProblem(empty).code).toBe('parameter_missing')
  })

  it('answers a malformed multipart upload with a 400 problem and leaves the pet as it was', async () => {
    const pet = (await v2('POST', '/v2/pet', { name: 'photo', photoUrls: [] })).json()
    const url = `/v2/pet/${pet.id}/uploadImage`
    const cases: { type: string; body: string }[] = [
      // Truncated: no closing boundary.
      {
        type: 'multipart/form-data; boundary=abc',
        body: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n\x89PNG',
      },
      // No boundary parameter at all.
      { type: 'multipart/form-data', body: '--abc\r\n\r\n--abc--\r\n' },
      // A boundary longer than the parser takes.
      { type: `multipart/form-data; boundary=${'b'.repeat(300)}`, body: 'x' },
      // Garbage where the part headers should be.
      { type: 'multipart/form-data; boundary=abc', body: '--abc\r\n\x00\x01\x02\r\n' },
    ]
    for (const c of cases) {
      const res = await v2('POST', url, c.body, { 'content-type': c.type })
      const problem = expectProblem(res)
      expect([400, 413, 415, 422], `${c.type}: ${res.body}`).toContain(res.statusCode)
      expect(problem.code).not.toBe('internal_error')
    }
    expect((await v2('GET', `/v2/pet/${pet.id}`)).json()).toEqual(pet)
  })

  it('refuses a NUL character in any text field, naming the field, the same on both dialects', async () => {
    const petsBefore = await count('pets')
    const usersBefore = await count('users')
    const v1Pet = expectProblem(await v1('POST', '/v1/pet', { name: `Rex${NUL}` }))
    expect(v1Pet).toMatchObject({ code: 'parameter_invalid', param: 'name' })
    expect(v1Pet.detail).toContain('NUL')
    const v1Form = await t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      headers: { authorization: basic(apiKey), ...form({ name: 'Rex', breed: `b${NUL}` }).headers },
      payload: form({ name: 'Rex', breed: `b${NUL}` }).payload,
    })
    expect(expectProblem(v1Form)).toMatchObject({ code: 'parameter_invalid', param: 'breed' })
    expect(expectProblem(await v1('POST', '/v1/user', { name: 'Ann', email: `a${NUL}@x.io` }))).toMatchObject(
      { param: 'email' },
    )
    expect(expectProblem(await v1('GET', `/v1/user/usr_${encodeURIComponent(NUL)}`))).toMatchObject({
      param: 'id',
    })
    expect(expectProblem(await v1('GET', `/v1/pet?species=${encodeURIComponent(NUL)}`))).toMatchObject({
      param: 'species',
    })
    const v2Pet = expectProblem(
      await v2('POST', '/v2/pet', { name: 'x', photoUrls: [`https://e.com/${NUL}`], tags: [{ name: NUL }] }),
    )
    expect(v2Pet.code).toBe('validation_failed')
    expect(v2Pet.errors?.map((e) => e.param).sort()).toEqual(['photoUrls.0', 'tags.0.name'])
    expect(expectProblem(await v2('POST', '/v2/user', { username: `u${NUL}` }))).toMatchObject({
      code: 'validation_failed',
      param: 'username',
    })
    expect(
      expectProblem(await v2('GET', `/v2/pet/findByTags?tags=${encodeURIComponent(`a${NUL}`)}`)),
    ).toMatchObject({ param: 'tags.0' })
    expect(await count('pets')).toBe(petsBefore)
    expect(await count('users')).toBe(usersBefore)
  })

  it('refuses half a surrogate pair in JSON text, naming the field, so an answer shows what was stored', async () => {
    const petsBefore = await count('pets')
    // JSON.stringify writes a lone surrogate as the escape \ud800, which JSON.parse accepts.
    const v1Pet = expectProblem(await v1('POST', '/v1/pet', { name: 'Rex\ud800' }))
    expect(v1Pet).toMatchObject({ code: 'parameter_invalid', param: 'name' })
    expect(v1Pet.detail).toContain('lone UTF-16 surrogate')
    const v2Pet = expectProblem(
      await v2('POST', '/v2/pet', { name: 'x', photoUrls: [], tags: [{ name: '\udc00' }] }),
    )
    expect(v2Pet.errors?.map((e) => e.param)).toEqual(['tags.0.name'])
    // A whole pair is a character like any other.
    expect((await v1('POST', '/v1/pet', { name: 'Rex 🐕' })).json()).toMatchObject({ name: 'Rex 🐕' })
    expect(await count('pets')).toBe(petsBefore + 1)
  })

  it('refuses a NUL character in OAuth requests with RFC 6749 invalid_request, on both dialects', async () => {
    const token = (payload: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload,
      })
    for (const res of [
      await token('grant_type=client_credentials&client_id=a%00b&client_secret=x'),
      await token('grant_type=password&client_id=1%001&code=a%00b'),
      await token('grant_type=client_credentials', {
        authorization: `Basic ${Buffer.from('a%00b:secret').toString('base64')}`,
      }),
      await t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'token=x&client_id=a%00b&client_secret=s',
      }),
    ]) {
      expect(res.statusCode, res.body).toBe(400)
      expect(res.headers['content-type']).toContain('application/json')
      expect(res.json()).toMatchObject({ error: 'invalid_request' })
      expect(res.json().error_description).toContain('NUL')
    }
    const authorize = await t.app.inject({
      method: 'GET',
      url: '/oauth/authorize?response_type=code&client_id=a%00b&scope=nope&redirect_uri=https%3A%2F%2Fx.example',
    })
    expect(authorize.statusCode, authorize.body).toBeLessThan(500)
  })

  it('bounds findByTags and findByStatus to 100 values with a clear 400, and answers 100 tags on both dialects', async () => {
    await v2('POST', '/v2/pet', { name: 'tagged', photoUrls: [], tags: [{ name: 't99' }] })
    const many = Array.from({ length: 1000 }, (_, i) => `t${i}`)
    // Comma-separated values of up to 200 characters each, repeated: 1,050 names in all.
    const commaLists = Array.from({ length: 21 }, () => `tags=${Array(50).fill('x').join(',')}`)
    for (const url of [
      `/v2/pet/findByTags?${commaLists.join('&')}`,
      `/v2/pet/findByTags?${many.map((n) => `tags=${n}`).join('&')}`,
      `/v2/pet/findByStatus?${Array(3)
        .fill(`status=${Array(39).fill('sold').join(',')}`)
        .join('&')}`,
    ]) {
      const problem = expectProblem(await v2('GET', url))
      expect(problem.code).toBe('parameter_invalid')
      expect(problem.detail).toContain('100')
    }
    const hundred = await v2(
      'GET',
      `/v2/pet/findByTags?${many
        .slice(0, 100)
        .map((n) => `tags=${n}`)
        .join('&')}`,
    )
    expect(hundred.statusCode, hundred.body).toBe(200)
    expect(hundred.json().map((p: { name: string }) => p.name)).toEqual(['tagged'])
  })

  it('takes a dashboard `next` with non-ASCII characters without a 500, and a failed sign-up creates nothing', async () => {
    const accounts = await count('accounts')
    const sessions = await count('dashboard_sessions')
    const browser = new SessionClient(t.app, '10.0.0.7')
    await browser.get('/dashboard/sign-up')
    const refused = await browser.post('/dashboard/sign-up', {
      email: 'not-an-email',
      password: 'purple-otter-sings-42',
      next: '/dashboard/€',
    })
    expect(refused.statusCode).toBe(400)
    expect(await count('accounts')).toBe(accounts)
    expect(await count('dashboard_sessions')).toBe(sessions)

    const email = `next-${Date.now()}@example.com`
    const signedUp = await browser.post('/dashboard/sign-up', {
      email,
      password: 'purple-otter-sings-42',
      next: '/dashboard/€',
    })
    expect(signedUp.statusCode, signedUp.body).toBe(303)
    expect(signedUp.headers.location).toBe('/dashboard/%E2%82%AC')
    expect(await count('accounts')).toBe(accounts + 1)
    expect(await count('dashboard_sessions')).toBe(sessions + 1)

    const again = new SessionClient(t.app, '10.0.0.8')
    await again.get('/dashboard/sign-in')
    const signedIn = await again.post('/dashboard/sign-in', {
      email,
      password: 'purple-otter-sings-42',
      next: '/dashboard/keys?x=€',
    })
    expect(signedIn.statusCode, signedIn.body).toBe(303)
    expect(signedIn.headers.location).toBe('/dashboard/keys?x=%E2%82%AC')
    expect(await count('dashboard_sessions')).toBe(sessions + 2)
  })

  it('refuses a NUL character in dashboard forms with a 400 page, creating nothing', async () => {
    const accounts = await count('accounts')
    const browser = new SessionClient(t.app, '10.0.0.9')
    await browser.get('/dashboard/sign-up')
    const res = await browser.post('/dashboard/sign-up', {
      email: `nul${NUL}-${Date.now()}@example.com`,
      password: 'purple-otter-sings-42',
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toContain('text/html')
    expect(await count('accounts')).toBe(accounts)

    const signIn = new SessionClient(t.app, '10.0.0.10')
    await signIn.get('/dashboard/sign-in')
    const refused = await signIn.post('/dashboard/sign-in', { email: `a${NUL}@x.io`, password: 'p' })
    expect(refused.statusCode).toBe(400)

    const owner = new SessionClient(t.app, '10.0.0.11')
    await owner.signUp(`keys-${Date.now()}@example.com`)
    const keys = await count('api_keys')
    await owner.get('/dashboard/keys')
    const key = await owner.post('/dashboard/keys', { name: `k${NUL}`, expiry: 'never', scopes: 'read:pets' })
    expect(key.statusCode).toBe(400)
    expect(key.body).not.toMatch(/at \w+ \(/)
    expect(await count('api_keys')).toBe(keys)
    expect(accountId).toBeTruthy()
  })
})
