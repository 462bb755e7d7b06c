import { beforeAll, expect, it } from 'vitest'
import { AUTHORIZE_RATE_LIMIT } from '../../../src/app.ts'
import { purgeExpiredOAuthRows } from '../../../src/oauth/oauth-store.ts'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { newClient, pkcePair, type TestClient } from '../../helpers/oauth.ts'

const REDIRECT = 'http://localhost:5555/callback'

/**
 * GET /oauth/authorize needs no credentials, and a valid one stores an Interaction row (for an
 * hour) before anyone signs in. Anonymous requests must not grow the database at will.
 */
describeDb('OAuth: anonymous authorization requests', () => {
  let client: TestClient
  let address = 0

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t, { redirectUris: [REDIRECT], scopes: ['read:pets'] })
  })

  /** A client address of its own, so each test starts with a full bucket. */
  const newAddress = () => `203.0.113.${++address}`

  function authorize(remoteAddress: string, extra: Record<string, string> = {}) {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      scope: 'read:pets',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ...extra,
    })
    return t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, remoteAddress })
  }

  const stored = async () =>
    (await t.database.db.selectFrom('oauth_store').select(['model', 'id']).execute()).length

  it('stores nothing for an authorization request that fails validation', async () => {
    const from = newAddress()
    const before = await stored()
    const refused = [
      await authorize(from, { client_id: 'pet_ci_nobody' }),
      await authorize(from, { redirect_uri: 'https://evil.example/cb' }),
      await authorize(from, { response_type: 'token' }),
      await authorize(from, { code_challenge_method: 'plain' }),
      await authorize(from, { scope: 'read:pets admin' }),
      await authorize(from, { scope: 'write:users' }),
      await authorize(from, { code_challenge: '' }),
    ]
    for (const res of refused) {
      expect([303, 400], res.body).toContain(res.statusCode)
      if (res.statusCode === 303) expect(res.headers.location).toContain('error=')
    }
    expect(await stored()).toBe(before)
  })

  it(`limits them per client address: ${AUTHORIZE_RATE_LIMIT.burst} at once, then 429 with Retry-After`, async () => {
    const from = newAddress()
    const before = await stored()
    const attempts = AUTHORIZE_RATE_LIMIT.burst + 20
    const statuses: number[] = []
    let limited: Awaited<ReturnType<typeof authorize>> | undefined
    for (let i = 0; i < attempts; i++) {
      const res = await authorize(from)
      statuses.push(res.statusCode)
      if (res.statusCode === 429) limited ??= res
    }
    const allowed = statuses.filter((s) => s === 303).length
    // The burst, plus at most one for each 2 s the loop took.
    expect(allowed).toBeGreaterThanOrEqual(AUTHORIZE_RATE_LIMIT.burst)
    expect(allowed).toBeLessThanOrEqual(AUTHORIZE_RATE_LIMIT.burst + 2)
    expect(statuses.filter((s) => s === 429).length).toBe(attempts - allowed)
    expect(limited?.headers['content-type']).toContain('application/problem+json')
    expect(limited?.json()).toMatchObject({ code: 'rate_limited', status: 429 })
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // What was stored is bounded by what was allowed: one Interaction row per allowed request.
    expect((await stored()) - before).toBe(allowed)

    // Another address is not affected.
    expect((await authorize(newAddress())).statusCode).toBe(303)
  })

  it('stores each Interaction with an expiry, and the purge removes expired ones', async () => {
    const res = await authorize(newAddress())
    expect(res.statusCode).toBe(303)
    const uid = new URL(res.headers.location as string, 'http://x').pathname.split('/').at(-1) ?? ''
    const row = await t.database.db
      .selectFrom('oauth_store')
      .select(['expires_at'])
      .where('model', '=', 'Interaction')
      .where('id', '=', uid)
      .executeTakeFirstOrThrow()
    const expiresIn = Date.parse(row.expires_at ?? '') - Date.now()
    expect(expiresIn).toBeGreaterThan(55 * 60_000)
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000)

    await t.database.db
      .updateTable('oauth_store')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('model', '=', 'Interaction')
      .execute()
    await purgeExpiredOAuthRows(t.database.db)
    const left = await t.database.db
      .selectFrom('oauth_store')
      .select('id')
      .where('model', '=', 'Interaction')
      .execute()
    expect(left).toEqual([])
  })
})
