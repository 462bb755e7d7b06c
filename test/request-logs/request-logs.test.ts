import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient, tokenRequest } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

interface Entry {
  id: string
  method: string
  path: string
  status: number
  error_code: string | null
  request_id: string
  api_key_id: string | null
  oauth_client_id: string | null
  api_version: string
  request_headers: Record<string, string> | null
  request_body: string | null
  response_body: string | null
}

describeDb('request logs', () => {
  let t: TestApp
  let a: { accountId: string; apiKey: string; keyId: string }
  let b: { accountId: string; apiKey: string; keyId: string }
  let client: TestClient

  beforeAll(async () => {
    t = await createTestApp()
    a = await t.newAccount()
    b = await t.newAccount()
    client = await newClient(t, { accountId: a.accountId, scopes: ['read:pets', 'write:pets'] })
  })
  afterAll(() => t.close())

  const list = async (account: { apiKey: string }, query = '') => {
    await t.app.deps.requestLogs.flush()
    const response = await withKey(
      t.app,
      account.apiKey,
    )({ method: 'GET', url: `/v1/request_log?limit=100${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as Entry[]
  }

  it('records a v1 success without its bodies, and a failure with them', async () => {
    const created = await withKey(
      t.app,
      a.apiKey,
    )({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex' }) })
    expect(created.statusCode).toBe(201)
    const failed = await withKey(
      t.app,
      a.apiKey,
    )({
      method: 'POST',
      url: '/v1/pet?expand=owner',
      ...form({ name: 'Rex', owner: 'Ann' }),
    })
    expect(failed.statusCode).toBe(400)
    const entries = await list(a)
    const ok = entries.find((e) => e.request_id === created.headers['request-id'])
    expect(ok).toMatchObject({
      method: 'POST',
      path: '/v1/pet',
      status: 201,
      error_code: null,
      api_key_id: a.keyId,
      oauth_client_id: null,
      api_version: 'v1',
      request_headers: null,
      request_body: null,
      response_body: null,
    })
    const bad = entries.find((e) => e.request_id === failed.headers['request-id'])
    expect(bad).toMatchObject({ path: '/v1/pet?expand=owner', status: 400, error_code: failed.json().code })
    expect(JSON.parse(bad!.request_body!)).toEqual({ name: 'Rex', owner: 'Ann' })
    expect(JSON.parse(bad!.response_body!)).toMatchObject({ code: failed.json().code })
    expect(bad!.request_headers).toMatchObject({
      authorization: '***',
      'content-type': 'application/x-www-form-urlencoded',
    })
  })

  it('records v2 requests with the OAuth client, and token requests of a known client', async () => {
    const token = await accessToken(t.app, client)
    const missing = await t.app.inject({ method: 'GET', url: '/v2/pet/999999', headers: bearer(token) })
    expect(missing.statusCode).toBe(404)
    const refused = await tokenRequest(t.app, client, { grant_type: 'refresh_token', refresh_token: 'nope' })
    expect(refused.statusCode).toBe(400)
    // A token request is recorded once its client is looked up, after the answer has gone.
    let entries: Entry[] = []
    await waitUntil('both token requests are recorded', async () => {
      entries = await list(a)
      return entries.filter((e) => e.api_version === 'oauth').length >= 2
    })
    expect(entries.find((e) => e.request_id === missing.headers['request-id'])).toMatchObject({
      method: 'GET',
      path: '/v2/pet/999999',
      status: 404,
      api_version: 'v2',
      api_key_id: null,
      oauth_client_id: client.clientId,
    })
    const tokens = entries.filter((e) => e.api_version === 'oauth')
    expect(tokens.map((e) => e.status).sort()).toEqual([200, 400])
    const failedToken = tokens.find((e) => e.status === 400)!
    expect(failedToken).toMatchObject({ path: '/oauth/token', oauth_client_id: client.clientId })
    expect(failedToken.error_code).toBe(refused.json().error)
    expect(JSON.parse(failedToken.request_body!)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: '***',
    })
  })

  it('filters by status class, method, path prefix, credential and request id, and pages by cursor', async () => {
    const all = await list(a)
    expect((await list(a, '&status_class=4xx')).every((e) => e.status >= 400 && e.status < 500)).toBe(true)
    expect((await list(a, '&status_class=2xx')).every((e) => e.status < 300)).toBe(true)
    expect((await list(a, '&method=post')).every((e) => e.method === 'POST')).toBe(true)
    const pets = await list(a, '&path=/v1/pet')
    expect(pets.length).toBeGreaterThanOrEqual(2)
    expect(pets.every((e) => e.path.startsWith('/v1/pet'))).toBe(true)
    expect(
      (await list(a, `&credential_id=${client.clientId}`)).every(
        (e) => e.oauth_client_id === client.clientId,
      ),
    ).toBe(true)
    const one = await list(a, `&request_id=${all[0]!.request_id}`)
    expect(one.map((e) => e.id)).toEqual([all[0]!.id])

    const first = await withKey(t.app, a.apiKey)({ method: 'GET', url: '/v1/request_log?limit=2' })
    const page = first.json() as { data: Entry[]; has_more: boolean }
    expect(page.has_more).toBe(true)
    const next = await withKey(
      t.app,
      a.apiKey,
    )({
      method: 'GET',
      url: `/v1/request_log?limit=2&starting_after=${page.data[1]!.id}`,
    })
    expect(next.json().data[0].id).not.toBe(page.data[1]!.id)
    const ids = [...page.data, ...next.json().data].map((e: Entry) => e.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  describe('isolation', () => {
    it("answers 404 for another account's entry, and never lists it", async () => {
      await withKey(t.app, b.apiKey)({ method: 'GET', url: '/v1/pet' })
      const mine = await list(a)
      const theirs = await list(b)
      expect(theirs.length).toBeGreaterThan(0)
      expect(theirs.every((e) => e.api_key_id === b.keyId)).toBe(true)
      const theirIds = new Set(theirs.map((e) => e.id))
      expect(mine.some((e) => theirIds.has(e.id))).toBe(false)
      const other = await withKey(t.app, a.apiKey)({ method: 'GET', url: `/v1/request_log/${theirs[0]!.id}` })
      expect(other.statusCode).toBe(404)
      expect(other.json().code).toBe('request_log_not_found')
      const own = await withKey(t.app, b.apiKey)({ method: 'GET', url: `/v1/request_log/${theirs[0]!.id}` })
      expect(own.statusCode).toBe(200)
      const cursor = await withKey(
        t.app,
        a.apiKey,
      )({
        method: 'GET',
        url: `/v1/request_log?starting_after=${theirs[0]!.id}`,
      })
      expect(cursor.statusCode).toBe(400)
    })
  })

  it('needs the read:request_logs scope', async () => {
    const restricted = await t.newAccount({ scopes: ['read:pets'] })
    const refused = await withKey(t.app, restricted.apiKey)({ method: 'GET', url: '/v1/request_log' })
    expect(refused.statusCode).toBe(403)
    const allowed = await t.newAccount({ scopes: ['read:request_logs'] })
    expect((await withKey(t.app, allowed.apiKey)({ method: 'GET', url: '/v1/request_log' })).statusCode).toBe(
      200,
    )
    // The refused request is in its own account's log.
    await t.app.deps.requestLogs.flush()
    const stored = await t.database.db
      .selectFrom('request_log')
      .select(['status'])
      .where('account_id', '=', restricted.accountId)
      .execute()
    expect(stored.map((r) => Number(r.status))).toContain(403)
  })
})
