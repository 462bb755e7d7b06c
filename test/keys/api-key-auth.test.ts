import { afterAll, beforeAll, expect, it } from 'vitest'
import { generateApiKey } from '../../src/keys/api-key-format.ts'
import { basic, createTestApp, form, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('API key authentication', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  const get = (authorization?: string) =>
    t.app.inject({
      method: 'GET',
      url: '/v1/pet',
      headers: authorization === undefined ? {} : { authorization },
    })

  it('refuses a request without a key: 401, Basic challenge, and a body saying how to send the key', async () => {
    const res = await get()
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="pet-service"/)
    expect(res.headers['content-type']).toContain('application/problem+json')
    const body = res.json()
    expect(body).toMatchObject({ status: 401, code: 'api_key_missing', type: '/problems/api_key_missing' })
    expect(body.detail).toContain('curl -u')
    expect(body.request_id).toBe(res.headers['request-id'])
  })

  it('refuses an empty Basic user name like a missing key', async () => {
    const res = await get(`Basic ${Buffer.from(':').toString('base64')}`)
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_missing')
  })

  it('accepts the key as the Basic user name with an empty password, and as a Bearer token', async () => {
    const { apiKey } = await t.newAccount()
    expect((await get(basic(apiKey))).statusCode).toBe(200)
    expect((await get(`Bearer ${apiKey}`)).statusCode).toBe(200)
  })

  it('refuses a malformed key, and one failing its checksum, as invalid without echoing it', async () => {
    const malformed = await get(basic('not-a-key'))
    expect(malformed.statusCode).toBe(401)
    expect(malformed.json().code).toBe('api_key_invalid')
    expect(malformed.headers['www-authenticate']).toMatch(/^Basic/)

    const key = generateApiKey()
    const typo = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`
    const res = await get(basic(typo))
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ code: 'api_key_invalid' })
    expect(res.json().detail).toContain('checksum')
    expect(res.body).not.toContain(typo)
  })

  it('refuses a well-formed key that does not exist, showing only its prefix and last four', async () => {
    const key = generateApiKey()
    const res = await get(basic(key))
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_invalid')
    expect(res.body).not.toContain(key)
    expect(res.json().detail).toContain(key.slice(-4))
  })

  it('refuses a revoked key with 401 saying it was revoked, at once on the revoking instance', async () => {
    const { apiKey, keyId, accountId } = await t.newAccount()
    expect((await get(basic(apiKey))).statusCode).toBe(200)
    expect(await t.app.deps.keys.revoke(keyId, accountId)).toBe(true)
    const res = await get(basic(apiKey))
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_revoked')
  })

  it('refuses an expired key with 401 saying it expired', async () => {
    const { apiKey } = await t.newAccount({ expiresAt: new Date(Date.now() - 1000) })
    const res = await get(basic(apiKey))
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_expired')
  })

  it('refuses an unsupported Authorization scheme with 401', async () => {
    const res = await get('Digest username="x"')
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('api_key_invalid')
  })

  it('answers two Authorization values, joined or on two lines, with 400 saying it was sent twice', async () => {
    const { apiKey } = await t.newAccount()
    for (const authorization of [`${basic(apiKey)}, ${basic(apiKey)}`, [basic(apiKey), `Bearer ${apiKey}`]]) {
      // An array is two header lines (Node's typings allow Authorization one).
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/pet',
        headers: { authorization } as Record<string, string | string[]>,
      })
      expect(res.statusCode).toBe(400)
      expect(res.json().code).toBe('invalid_request')
      expect(res.json().detail).toMatch(
        /Authorization .*2 values \((Basic, Basic|Basic, Bearer)\).*send it once/,
      )
      expect(res.body).not.toContain(apiKey.slice(-8))
    }
  })

  it('lets a key restricted to read:pets read but not write (403 insufficient_scope)', async () => {
    const { apiKey } = await t.newAccount({ scopes: ['read:pets'] })
    expect((await get(basic(apiKey))).statusCode).toBe(200)
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Rex' }),
      headers: { authorization: basic(apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ code: 'insufficient_scope', required_scope: 'write:pets' })
    const users = await t.app.inject({
      method: 'GET',
      url: '/v1/user',
      headers: { authorization: basic(apiKey) },
    })
    expect(users.statusCode).toBe(403)
  })

  it('records when a key was last used', async () => {
    const { apiKey, keyId } = await t.newAccount()
    await get(basic(apiKey))
    await expect
      .poll(
        async () =>
          (
            await t.database.db
              .selectFrom('api_keys')
              .select('last_used_at')
              .where('id', '=', keyId)
              .executeTakeFirst()
          )?.last_used_at,
      )
      .not.toBeNull()
  })
})

describeDb('API key revocation across instances', () => {
  it('refuses a key revoked on another instance within the key cache time (at most 5 s)', async () => {
    const a = await createTestApp({ KEY_CACHE_SECONDS: '1' })
    try {
      const { buildApp } = await import('../../src/app.ts')
      const b = await buildApp({ config: a.config, database: a.database, logger: false })
      try {
        const { apiKey, keyId } = await a.newAccount()
        const onB = () =>
          b.inject({ method: 'GET', url: '/v1/pet', headers: { authorization: basic(apiKey) } })
        expect((await onB()).statusCode).toBe(200) // B now caches the key as valid
        await a.app.deps.keys.revoke(keyId)
        // The guarantee under test: refused on the other instance within 5 s.
        await expect.poll(async () => (await onB()).statusCode, { timeout: 5000, interval: 100 }).toBe(401)
      } finally {
        await b.close()
      }
    } finally {
      await a.close()
    }
  })
})

describeDb('failed authentication limit', () => {
  it('answers 429 with Retry-After after a burst of failed attempts from one address', async () => {
    const t = await createTestApp()
    try {
      // 30 failures pass as 401s; then one a second refills, so on a slow machine a few more may.
      const started = Date.now()
      const statuses: number[] = []
      let last: Awaited<ReturnType<typeof t.app.inject>> | undefined
      while (last?.statusCode !== 429 && statuses.length < 200) {
        last = await t.app.inject({
          method: 'GET',
          url: '/v1/pet',
          headers: { authorization: basic(generateApiKey()) },
        })
        statuses.push(last.statusCode)
      }
      expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
      expect(statuses.length - 1).toBeLessThanOrEqual(30 + Math.ceil((Date.now() - started) / 1000))
      expect(last!.statusCode).toBe(429)
      expect(last!.headers['retry-after']).toMatch(/^\d+$/)
      expect(last!.json().code).toBe('rate_limited')
    } finally {
      await t.close()
    }
  })
})
