import type { LightMyRequestResponse } from 'fastify'
import { expect, it } from 'vitest'
import { passwordWork } from '../../src/accounts/password-work.ts'
import { useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

const PASSWORD = 'purple-otter-sings-42'
const FLOOD = 30

/**
 * Every password costs a scrypt derivation (src/accounts/passwords.ts). One account hashing
 * many at once must wait behind its own work, not in front of everyone else's, and past a
 * bound it is told to slow down.
 */
describeDb('password hashing under a flood from one account', () => {
  const t = useTestApp()

  it("signs another account in while the flood's hashes still wait, and answers the flood 429 past its bound", async () => {
    const email = `other-${Date.now()}@example.com`
    expect((await new SessionClient(t.app, '10.20.0.1').signUp(email, PASSWORD)).statusCode).toBe(303)
    const other = new SessionClient(t.app, '10.20.0.2')
    await other.get('/dashboard/sign-in')

    const flooder = await newClient(t)
    const token = await accessToken(t.app, flooder)
    const finished: LightMyRequestResponse[] = []
    let firstHashed: () => void = () => {}
    const oneHashed = new Promise<void>((resolve) => {
      firstHashed = resolve
    })
    const flood = Array.from({ length: FLOOD }, (_, i) =>
      t.app
        .inject({
          method: 'POST',
          url: '/v2/user',
          headers: bearer(token),
          payload: { username: `flood${i}`, password: `flood-password-${i}` },
        })
        .then((res) => {
          finished.push(res)
          if (res.statusCode === 200) firstHashed()
          return res
        }),
    )

    // The flood is under way (one of its passwords was hashed); now the other account signs in.
    await oneHashed
    const signIn = await other.post('/dashboard/sign-in', { email, password: PASSWORD })
    const hashedBeforeSignIn = finished.filter((r) => r.statusCode === 200).length
    expect(signIn.statusCode).toBe(303)

    const answers = await Promise.all(flood)
    const created = answers.filter((r) => r.statusCode === 200)
    const refused = answers.filter((r) => r.statusCode === 429)
    expect(created.length + refused.length).toBe(FLOOD)
    // The sign-in did not wait for the flood's queue to drain.
    expect(hashedBeforeSignIn).toBeLessThan(created.length)
    // Past its bound the flooder is told to come back later.
    expect(refused.length).toBeGreaterThan(0)
    for (const res of refused) {
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json().code).toBe('rate_limited')
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    }
  }, 120_000)

  it("tells a dashboard sign-in to try again in a few seconds while its address's password work is full, without counting it", async () => {
    const email = `busy-${Date.now()}@example.com`
    expect((await new SessionClient(t.app, '10.21.0.1').signUp(email, PASSWORD)).statusCode).toBe(303)
    const address = '10.21.0.2'
    // The address's queue is full: 8 derivations of its own are running or waiting.
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const holding = Array.from({ length: 8 }, () => passwordWork.run({ address }, () => held))
    const browser = new SessionClient(t.app, address)
    const busy = await browser.signIn(email, PASSWORD)
    expect(busy.statusCode).toBe(429)
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0)
    expect(busy.body).toContain('Try again in a few seconds')
    expect(browser.cookies.has('pet_session')).toBe(false)
    release()
    await Promise.all(holding)
    const attempts = await t.database.db
      .selectFrom('sign_in_attempts')
      .select('succeeded')
      .where('email', '=', email)
      .where('kind', '=', 'sign_in')
      .execute()
    expect(attempts).toEqual([])
    expect((await browser.signIn(email, PASSWORD)).statusCode).toBe(303)
  })
})
