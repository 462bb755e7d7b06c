import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Resolve } from '../../src/webhooks/url-policy.ts'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

/** Public and private names without the network. */
const resolve: Resolve = async (host) => {
  const table: Record<string, string> = {
    'hooks.example.com': '93.184.215.14',
    'intranet.example.com': '10.0.0.5',
  }
  const address = table[host]
  if (address === undefined) throw new Error('ENOTFOUND')
  return [{ address, family: 4 }]
}

describeDb('webhook endpoints API', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({}, { webhooks: { resolve } })
  })
  afterAll(async () => t.close())

  const json = (body: unknown) => ({
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  })

  it('creates an endpoint from JSON: 201, Location, and the whsec_ secret shown once', async () => {
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const res = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...json({ url: 'https://hooks.example.com/pets', enabled_events: ['pet.*'], description: 'CRM sync' }),
    })
    expect(res.statusCode).toBe(201)
    const created = res.json()
    expect(res.headers.location).toBe(`/v1/webhook_endpoint/${created.id}`)
    expect(created).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://hooks.example.com/pets',
      enabled_events: ['pet.*'],
      description: 'CRM sync',
      status: 'enabled',
      disabled_reason: null,
    })
    expect(created.id).toMatch(/^we_/)
    expect(created.secret).toMatch(/^whsec_/)
    const read = await call({ method: 'GET', url: `/v1/webhook_endpoint/${created.id}` })
    expect(read.statusCode).toBe(200)
    expect(read.json()).not.toHaveProperty('secret')
    expect(read.json()).toEqual({ ...created, secret: undefined })
    // At rest the secret is encrypted, never in clear.
    const row = await t.database.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(row)).not.toContain(created.secret.slice(6))
    expect(row.secret_encrypted).toMatch(/^v1\./)
  })

  it('creates from a form, with enabled_events[] or repeated enabled_events', async () => {
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const bracketed = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: 'url=https%3A%2F%2Fhooks.example.com%2Fa&enabled_events[]=pet.created&enabled_events[]=user.*',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(bracketed.statusCode).toBe(201)
    expect(bracketed.json().enabled_events).toEqual(['pet.created', 'user.*'])
    const repeated = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: 'url=https%3A%2F%2Fhooks.example.com%2Fb&enabled_events=pet.deleted&enabled_events=*',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(repeated.statusCode).toBe(201)
    expect(repeated.json().enabled_events).toEqual(['pet.deleted', '*'])
    const single = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...form({ url: 'https://hooks.example.com/c', enabled_events: 'pet.created' }),
    })
    expect(single.json().enabled_events).toEqual(['pet.created'])
  })

  it.each([
    ['http://hooks.example.com/', 'must use https'],
    ['https://intranet.example.com/', 'resolves to a private address 10.0.0.5'],
    ['https://169.254.169.254/latest', 'resolves to a link-local address 169.254.169.254'],
    ['https://127.0.0.1/', 'resolves to a loopback address 127.0.0.1'],
  ])('refuses %s with 400 webhook_url_refused naming why', async (url, why) => {
    const { apiKey } = await t.newAccount()
    const res = await withKey(
      t.app,
      apiKey,
    )({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...json({ url, enabled_events: ['*'] }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toContain('application/problem+json')
    expect(res.json()).toMatchObject({ code: 'webhook_url_refused', param: 'url' })
    expect(res.json().detail).toContain(why)
    expect(await t.database.db.selectFrom('webhook_endpoints').selectAll().execute()).not.toContainEqual(
      expect.objectContaining({ url }),
    )
  })

  it('refuses unknown event types with 400 naming them', async () => {
    const { apiKey } = await t.newAccount()
    const res = await withKey(
      t.app,
      apiKey,
    )({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...json({
        url: 'https://hooks.example.com/',
        enabled_events: ['pet.created', 'pet.exploded', 'invoice.*'],
      }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parameter_invalid', param: 'enabled_events' })
    expect(res.json().detail).toContain('pet.exploded, invoice.*')
  })

  it('updates, disables with a reason, enables, lists newest first and deletes', async () => {
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const ids: string[] = []
    for (const path of ['a', 'b', 'c']) {
      const res = await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        ...json({ url: `https://hooks.example.com/${path}`, enabled_events: ['*'] }),
      })
      ids.push(res.json().id)
    }
    const patched = await call({
      method: 'PATCH',
      url: `/v1/webhook_endpoint/${ids[0]}`,
      ...json({ enabled_events: ['user.created'], description: 'users', status: 'disabled' }),
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({
      enabled_events: ['user.created'],
      description: 'users',
      status: 'disabled',
      disabled_reason: 'Disabled by the account holder.',
    })
    const enabled = await call({
      method: 'PATCH',
      url: `/v1/webhook_endpoint/${ids[0]}`,
      ...json({ status: 'enabled' }),
    })
    expect(enabled.json()).toMatchObject({ status: 'enabled', disabled_reason: null })
    const refused = await call({
      method: 'PATCH',
      url: `/v1/webhook_endpoint/${ids[0]}`,
      ...json({ url: 'https://intranet.example.com/' }),
    })
    expect(refused.json().code).toBe('webhook_url_refused')

    const first = await call({ method: 'GET', url: '/v1/webhook_endpoint?limit=2' })
    expect(first.json().data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]])
    expect(first.json().has_more).toBe(true)
    const next = await call({ method: 'GET', url: `/v1/webhook_endpoint?limit=2&starting_after=${ids[1]}` })
    expect(next.json().data.map((e: { id: string }) => e.id)).toEqual([ids[0]])
    expect(next.json().has_more).toBe(false)

    const deleted = await call({ method: 'DELETE', url: `/v1/webhook_endpoint/${ids[1]}` })
    expect(deleted.json()).toEqual({ id: ids[1], object: 'webhook_endpoint', deleted: true })
    expect((await call({ method: 'GET', url: `/v1/webhook_endpoint/${ids[1]}` })).statusCode).toBe(404)
  })

  it('rotates the secret: a new one, shown once', async () => {
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const created = (
      await call({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        ...json({ url: 'https://hooks.example.com/', enabled_events: ['*'] }),
      })
    ).json()
    const rotated = await call({
      method: 'POST',
      url: `/v1/webhook_endpoint/${created.id}/rotate_secret`,
      ...form({ expire_current_in_hours: '2' }),
    })
    expect(rotated.statusCode).toBe(200)
    expect(rotated.json().secret).toMatch(/^whsec_/)
    expect(rotated.json().secret).not.toBe(created.secret)
    expect(new Webhook(rotated.json().secret)).toBeDefined()
    const row = await t.database.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow()
    expect(row.previous_secret_encrypted).not.toBeNull()
    expect(Date.parse(row.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(3_500_000)
  })

  it("answers 404 for another account's endpoint on every route, and lists none of them", async () => {
    const owner = await t.newAccount()
    const other = await t.newAccount()
    const created = (
      await withKey(
        t.app,
        owner.apiKey,
      )({
        method: 'POST',
        url: '/v1/webhook_endpoint',
        ...json({ url: 'https://hooks.example.com/', enabled_events: ['*'] }),
      })
    ).json()
    const call = withKey(t.app, other.apiKey)
    const id = created.id
    const requests = [
      { method: 'GET', url: `/v1/webhook_endpoint/${id}` },
      { method: 'PATCH', url: `/v1/webhook_endpoint/${id}`, ...json({ description: 'mine now' }) },
      { method: 'DELETE', url: `/v1/webhook_endpoint/${id}` },
      { method: 'POST', url: `/v1/webhook_endpoint/${id}/rotate_secret`, ...json({}) },
      { method: 'GET', url: `/v1/webhook_endpoint/${id}/delivery` },
      { method: 'POST', url: `/v1/webhook_endpoint/${id}/test` },
      { method: 'POST', url: `/v1/webhook_endpoint/${id}/resend`, ...json({ event_id: 'evt_x' }) },
    ] as const
    for (const request of requests) {
      const res = await call(request)
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(404)
      expect(res.json().code).toBe('webhook_endpoint_not_found')
    }
    expect((await call({ method: 'GET', url: '/v1/webhook_endpoint' })).json().data).toEqual([])
    const untouched = await withKey(t.app, owner.apiKey)({ method: 'GET', url: `/v1/webhook_endpoint/${id}` })
    expect(untouched.json().description).toBeNull()
  })

  it('needs write:webhooks to change and read:webhooks to read', async () => {
    const reader = await t.newAccount({ scopes: ['read:webhooks'] })
    const res = await withKey(
      t.app,
      reader.apiKey,
    )({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      ...json({ url: 'https://hooks.example.com/', enabled_events: ['*'] }),
    })
    expect(res.statusCode).toBe(403)
    expect(
      (await withKey(t.app, reader.apiKey)({ method: 'GET', url: '/v1/webhook_endpoint' })).statusCode,
    ).toBe(200)
    const petsOnly = await t.newAccount({ scopes: ['read:pets'] })
    expect(
      (await withKey(t.app, petsOnly.apiKey)({ method: 'GET', url: '/v1/webhook_endpoint' })).statusCode,
    ).toBe(403)
  })
})

describeDb('webhook endpoints per account', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ENDPOINTS_PER_ACCOUNT: '3' }, { webhooks: { resolve } })
  })
  afterAll(async () => t.close())

  const create = (call: ReturnType<typeof withKey>, n: number) =>
    call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: JSON.stringify({ url: `https://hooks.example.com/${n}`, enabled_events: ['*'] }),
      headers: { 'content-type': 'application/json' },
    })

  it('refuses an endpoint past WEBHOOKS_ENDPOINTS_PER_ACCOUNT with 409 webhook_endpoint_limit, even among creates sent at once', async () => {
    const { apiKey } = await t.newAccount()
    const call = withKey(t.app, apiKey)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => create(call, n)))
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409])
    const refused = answers.find((a) => a.statusCode === 409)!
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(refused.json()).toMatchObject({ code: 'webhook_endpoint_limit', status: 409 })
    expect(refused.json().detail).toContain('already has 3 webhook endpoints')
    const listed = (await call({ method: 'GET', url: '/v1/webhook_endpoint' })).json().data
    expect(listed).toHaveLength(3)
    // Another account has its own allowance; a deleted endpoint frees a place.
    expect((await create(withKey(t.app, (await t.newAccount()).apiKey), 0)).statusCode).toBe(201)
    expect((await call({ method: 'DELETE', url: `/v1/webhook_endpoint/${listed[0].id}` })).statusCode).toBe(
      200,
    )
    expect((await create(call, 9)).statusCode).toBe(201)
    expect((await create(call, 10)).statusCode).toBe(409)
  })
})
