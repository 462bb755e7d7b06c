import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Resolve } from '../../src/webhooks/url-policy.ts'
import { basic, createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, clientBasic, formBody, newClient, type TestClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'

const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }]

/**
 * Every kind of secret, sent through failing requests (the ones whose bodies and headers are
 * kept), must be found nowhere in the request_log table: every column of every row, read raw.
 */
describeDb('request logs keep no secret', () => {
  let t: TestApp
  let account: { accountId: string; apiKey: string }
  let client: TestClient
  let webhookSecret: string
  let token: string

  beforeAll(async () => {
    t = await createTestApp({}, { webhooks: { resolve } })
    account = await t.newAccount()
    client = await newClient(t, { accountId: account.accountId, scopes: ['read:pets', 'write:pets'] })
    token = await accessToken(t.app, client)
    const endpoint = await withKey(
      t.app,
      account.apiKey,
    )({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: { url: 'https://hooks.example.com/pets', enabled_events: ['pet.*'] },
    })
    expect(endpoint.statusCode).toBe(201)
    webhookSecret = endpoint.json().secret
  })
  afterAll(() => t.close())

  it('finds none of them in any column after failing requests that carry them', async () => {
    const password = 'correct-horse-battery-staple-41'
    const refreshToken = 'rt-9f8e7d6c5b4a39281706f5e4d3c2b1a0'
    const sessionCookie = 'dashboard-session-5e1f0c9a7b3d'
    const secrets = [
      account.apiKey,
      client.clientSecret,
      password,
      refreshToken,
      webhookSecret,
      token,
      sessionCookie,
    ]
    const key = withKey(t.app, account.apiKey)
    const failures = [
      // The API key: in Basic (the helper), as Bearer, in the body, in the query, in a header of its own.
      key({
        method: 'POST',
        url: `/v1/pet?api_key=${account.apiKey}`,
        payload: { name: account.apiKey, nope: 1 },
      }),
      t.app.inject({
        method: 'POST',
        url: '/v1/pet',
        headers: { authorization: `Bearer ${account.apiKey}`, 'x-api-key': account.apiKey },
        payload: { owner: { api_key: account.apiKey } },
      }),
      // The Petstore's api_key header on v2.
      t.app.inject({ method: 'GET', url: '/v2/pet/0', headers: { api_key: account.apiKey } }),
      // A client secret: to the token endpoint (in Basic, and in the form), and in a v1 body.
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        ...formBody({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      }),
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: formBody({ grant_type: 'password', password, code: refreshToken }).payload,
        headers: {
          ...formBody({}).headers,
          authorization: clientBasic(client.clientId, client.clientSecret),
          cookie: `pet_session=${sessionCookie}`,
        },
      }),
      key({ method: 'POST', url: '/v1/user', payload: { client_secret: client.clientSecret, name: '' } }),
      // A password: a v2 user with a bad field, the Petstore login under an encoded name, a v1 body.
      t.app.inject({
        method: 'POST',
        url: '/v2/user',
        headers: bearer(token),
        payload: { username: 'ann', password, id: 'not a number' },
      }),
      t.app.inject({
        method: 'GET',
        url: `/v2/user/login?username=nobody&%70assword=${password}`,
        headers: bearer(token),
      }),
      key({
        method: 'PATCH',
        url: '/v1/user/usr_missing',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `pet_session=${sessionCookie}`,
        },
        payload: `new_password=${password}&name=x`,
      }),
      // A refresh token and an access token where they do not belong.
      key({
        method: 'POST',
        url: `/v1/pet?refresh_token=${refreshToken}`,
        payload: { refresh_token: refreshToken },
      }),
      t.app.inject({
        method: 'PUT',
        url: `/v2/pet?access_token=${token}`,
        headers: bearer(token),
        payload: { name: token, photoUrls: [] },
      }),
      // A webhook secret: as a field the endpoint does not take, and in a description.
      key({ method: 'POST', url: '/v1/webhook_endpoint', payload: { url: 'nope', secret: webhookSecret } }),
      key({ method: 'POST', url: '/v1/pet', payload: { name: `leaked ${webhookSecret}`, status: 'lost' } }),
    ]
    const answers = await Promise.all(failures)
    for (const answer of answers) expect(answer.statusCode, answer.body).toBeGreaterThanOrEqual(400)

    // The token endpoint's entries are recorded once its client is looked up, after the answer.
    const rowsNow = async () => {
      await t.app.deps.requestLogs.flush()
      return t.database.db.selectFrom('request_log').selectAll().execute()
    }
    await waitUntil(
      'both token requests are recorded',
      async () => (await rowsNow()).filter((r) => r.api_version === 'oauth').length >= 2,
    )
    const rows = await rowsNow()
    // Every failure was recorded (the token requests answer no Request-Id: the provider writes them).
    const recorded = new Set(rows.map((r) => r.request_id))
    const missing = answers.filter(
      (a) => a.headers['request-id'] !== undefined && !recorded.has(String(a.headers['request-id'])),
    )
    expect(missing.map((a) => a.body)).toEqual([])
    expect(rows.filter((r) => Number(r.status) >= 400).length).toBe(failures.length)
    expect(rows.some((r) => r.request_body !== null && r.request_headers !== null)).toBe(true)

    const everything = JSON.stringify(rows)
    const encoded = (s: string) => [s, encodeURIComponent(s), Buffer.from(s).toString('base64')]
    for (const secret of secrets) {
      for (const form of encoded(secret)) expect(everything, secret).not.toContain(form)
    }
    for (const header of [basic(account.apiKey), clientBasic(client.clientId, client.clientSecret)]) {
      expect(everything).not.toContain(header.slice('Basic '.length))
    }
  })
})
