import type { LightMyRequestResponse } from 'fastify'
import { expect, it } from 'vitest'
import { findAccountByEmail } from '../../src/accounts/accounts-repository.ts'
import { nowIso } from '../../src/lib/time.ts'
import { recordAttempt } from '../../src/sign-in/attempts-repository.ts'
import { useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'
import { CookieJar, formBody, newClient, pathOf, pkcePair } from '../helpers/oauth.ts'

const PASSWORD = 'purple-otter-sings-42'
const REDIRECT = 'http://localhost:5555/callback'
let n = 0
const uniqueEmail = (who: string) => `${who}-${++n}-${Date.now()}@example.com`

/** Counts answers by status. */
function tally(responses: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const res of responses) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
  return counts
}

/**
 * The guessing limits of src/sign-in/sign-in-limits.ts (10 wrong passwords per account since
 * its last success, 20 per client address per 15 minutes) must hold when the guesses arrive
 * all at once: every guess is counted before its password is checked.
 */
describeDb('sign-in limits under concurrent guesses', () => {
  // Two hundred guesses at one account queue on its attempt counter's row: on a loaded CI
  // machine that queue outlasts the default 5 s database waits and some answer 503. The
  // counting is under test here, not the timeouts (test/db/database-timeouts.test.ts is).
  const t = useTestApp({ DB_CONNECT_TIMEOUT_SECONDS: '30', DB_LOCK_TIMEOUT_SECONDS: '30' })

  async function account(): Promise<string> {
    const email = uniqueEmail('holder')
    const res = await new SessionClient(t.app, `10.9.${++n % 250}.1`).signUp(email, PASSWORD)
    expect(res.statusCode, res.body).toBe(303)
    return email
  }

  async function earlierFailures(count: number, attempt: { email: string | null; ip: string }) {
    for (let i = 0; i < count; i++) {
      await recordAttempt(t.database.db, { kind: 'sign_in', ...attempt, succeeded: false, at: nowIso() })
    }
  }

  /** Sign-in form posts sent at once, each from the given address, with a CSRF token of its own page. */
  async function signInBurst(guesses: { email: string; password: string; ip: string }[]) {
    const browser = new SessionClient(t.app)
    await browser.get('/dashboard/sign-in')
    const body = (g: { email: string; password: string }) =>
      new URLSearchParams({ _csrf: browser.csrf, email: g.email, password: g.password }).toString()
    return Promise.all(
      guesses.map((g) =>
        t.app.inject({
          method: 'POST',
          url: '/dashboard/sign-in',
          remoteAddress: g.ip,
          headers: { cookie: browser.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
          payload: body(g),
        }),
      ),
    )
  }

  it('checks at most 10 of 200 wrong passwords sent at once for one account, from 200 addresses', async () => {
    const email = await account()
    const answers = await signInBurst(
      Array.from({ length: 200 }, (_, i) => ({ email, password: `wrong-${i}`, ip: `10.1.${i}.1` })),
    )
    const counts = tally(answers)
    expect(counts[401] ?? 0).toBeLessThanOrEqual(10)
    expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(200)
    // The owner is locked out too, until the window passes.
    const owner = await new SessionClient(t.app, '10.2.0.1').signIn(email, PASSWORD)
    expect(owner.statusCode).toBe(429)
  }, 120_000)

  it('checks at most 20 of 200 wrong passwords sent at once from one address, across accounts', async () => {
    const answers = await signInBurst(
      Array.from({ length: 200 }, (_, i) => ({
        email: uniqueEmail(`nobody${i}`),
        password: 'wrong-password',
        ip: '10.3.0.1',
      })),
    )
    const counts = tally(answers)
    expect(counts[401] ?? 0).toBeLessThanOrEqual(20)
    expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(200)
  }, 120_000)

  it('never signs in with the right password sent as guess 88 of 100 when one guess is left', async () => {
    const email = await account()
    await earlierFailures(9, { email, ip: '10.4.0.1' })
    const answers = await signInBurst(
      Array.from({ length: 100 }, (_, i) => ({
        email,
        password: i === 87 ? PASSWORD : `wrong-${i}`,
        ip: `10.5.${i}.1`,
      })),
    )
    expect(answers[87]!.statusCode).toBe(429)
    expect(answers.filter((a) => a.headers['set-cookie']?.toString().includes('pet_session='))).toEqual([])
    const counts = tally(answers)
    expect(counts[401] ?? 0).toBeLessThanOrEqual(1)
    expect(counts[303]).toBeUndefined()
  }, 120_000)

  it('never signs in with the right password among 100 guesses sent at once after the limit is reached', async () => {
    const email = await account()
    await earlierFailures(10, { email, ip: '10.6.0.1' })
    const answers = await signInBurst(
      Array.from({ length: 100 }, (_, i) => ({
        email,
        password: i % 10 === 7 ? PASSWORD : `wrong-${i}`,
        ip: `10.7.${i}.1`,
      })),
    )
    expect(tally(answers)).toEqual({ 429: 100 })
  }, 120_000)

  it('counts OAuth sign-in page guesses before checking them, sharing the dashboard budget', async () => {
    const email = await account()
    await earlierFailures(9, { email, ip: '10.8.0.1' })
    const client = await newClient(t, { redirectUris: [REDIRECT], scopes: ['read:pets'] })
    const jar = new CookieJar()
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      scope: 'read:pets',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })
    const start = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}` })
    jar.store(start.headers['set-cookie'])
    const signInUrl = pathOf(start.headers.location)
    expect(signInUrl).toMatch(/^\/oauth\/interaction\//)
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const body = formBody({ email, password: i === 47 ? PASSWORD : `wrong-${i}` })
        return t.app.inject({
          method: 'POST',
          url: `${signInUrl}/login`,
          remoteAddress: `10.10.${i}.1`,
          payload: body.payload,
          headers: { ...body.headers, cookie: jar.header() },
        })
      }),
    )
    expect(answers[47]!.statusCode).toBe(429)
    const counts = tally(answers)
    expect(counts[401] ?? 0).toBeLessThanOrEqual(1)
    expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(60)
  }, 120_000)

  it('counts current-password guesses of the password-change form before checking them', async () => {
    const email = await account()
    const holder = new SessionClient(t.app, '10.11.0.1')
    expect((await holder.signIn(email, PASSWORD)).statusCode).toBe(303)
    await earlierFailures(9, { email, ip: '10.11.0.2' })
    await holder.get('/dashboard/account')
    const csrf = holder.csrf
    const before = (await findAccountByEmail(t.database.db, email))?.password_hash
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: '/dashboard/account/password',
          remoteAddress: `10.12.${i}.1`,
          headers: { cookie: holder.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            _csrf: csrf,
            current_password: i === 47 ? PASSWORD : `wrong-${i}`,
            new_password: 'green-kettle-dances-77',
          }).toString(),
        }),
      ),
    )
    expect(answers[47]!.statusCode).toBe(429)
    const counts = tally(answers)
    expect(counts[400] ?? 0).toBeLessThanOrEqual(1)
    expect((counts[400] ?? 0) + (counts[429] ?? 0)).toBe(60)
    expect((await findAccountByEmail(t.database.db, email))?.password_hash).toBe(before)
  }, 120_000)
})
