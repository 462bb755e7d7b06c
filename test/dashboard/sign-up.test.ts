import type { LightMyRequestResponse } from 'fastify'
import { expect, it } from 'vitest'
import { passwordWork } from '../../src/accounts/password-work.ts'
import { useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

const PASSWORD = 'purple-otter-sings-42'
let n = 0
const uniqueEmail = (who: string) => `${who}-${++n}-${Date.now()}@example.com`

/**
 * Sign-up must not tell whether an email has an account (beyond what signing up itself
 * inevitably shows: a new email gets a signed-in account, seen on the next page) and is limited
 * per address.
 */
describeDb('dashboard sign-up', () => {
  const t = useTestApp()

  it('answers an email that has an account with the same status and redirect as a new one, and no session', async () => {
    const email = uniqueEmail('taken')
    const first = new SessionClient(t.app, '10.30.0.1')
    const created = await first.signUp(email)
    expect(created.statusCode).toBe(303)
    expect(first.cookies.has('pet_session')).toBe(true)

    const again = new SessionClient(t.app, '10.30.0.2')
    const taken = await again.signUp(email, 'another-strong-passphrase-9')
    expect(taken.statusCode).toBe(created.statusCode)
    expect(taken.headers.location).toBe(created.headers.location)
    expect(taken.body).not.toMatch(/exist|already|taken/i)
    // Its session cookie (as a new account's answer has one) opens no session: following the
    // redirect asks to sign in; the account's password did not change.
    const landed = await again.get(String(taken.headers.location))
    expect(landed.statusCode).toBe(303)
    expect(landed.headers.location).toMatch(/^\/dashboard\/sign-in\?notice=signed_in_required/)
    expect((await new SessionClient(t.app, '10.30.0.3').signIn(email, PASSWORD)).statusCode).toBe(303)
  })

  /** An answer with what differs between any two answers (the date, the request id, cookie values) taken out. */
  function shape(res: LightMyRequestResponse) {
    const { date: _date, 'request-id': _id, 'set-cookie': _cookies, ...headers } = res.headers
    const cookies = (res.cookies as Record<string, unknown>[]).map(({ value, expires, ...cookie }) => ({
      ...cookie,
      length: String(value).length,
      expiresInDays:
        expires instanceof Date ? Math.round((expires.getTime() - Date.now()) / 86_400_000) : null,
    }))
    return { status: res.statusCode, headers, cookies, body: res.body }
  }

  it('answers an email that has an account exactly as a new one: status, headers, cookies and body', async () => {
    const email = uniqueEmail('alike')
    expect((await new SessionClient(t.app, '10.34.0.1').signUp(email)).statusCode).toBe(303)
    for (const next of [undefined, '/dashboard/keys']) {
      const signUp = async (address: string, target: string) => {
        const browser = new SessionClient(t.app, address)
        await browser.get(`/dashboard/sign-up${next === undefined ? '' : `?next=${next}`}`)
        return browser.post('/dashboard/sign-up', {
          email: target,
          password: 'another-strong-passphrase-9',
          ...(next === undefined ? {} : { next }),
        })
      }
      const fresh = await signUp('10.34.0.2', uniqueEmail('alike-new'))
      const taken = await signUp('10.34.0.3', email)
      expect(shape(taken)).toEqual(shape(fresh))
      expect(fresh.cookies.map((c) => c.name)).toContain('pet_session')
    }
  })

  it('does the same scrypt work for an email that has an account as for a new one', async () => {
    const email = uniqueEmail('work')
    expect((await new SessionClient(t.app, '10.31.0.1').signUp(email)).statusCode).toBe(303)
    // With the address's password work full, both kinds of sign-up are told to wait: both need it.
    const address = '10.31.0.2'
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const holding = Array.from({ length: 8 }, () => passwordWork.run({ address }, () => held))
    try {
      for (const target of [email, uniqueEmail('new')]) {
        const res = await new SessionClient(t.app, address).signUp(target)
        expect(res.statusCode).toBe(429)
        expect(res.body).toContain('Try again in a few seconds')
      }
    } finally {
      release()
      await Promise.all(holding)
    }
  })

  it('counts every sign-up from an address, for emails with an account too: 20 an hour', async () => {
    const email = uniqueEmail('repeat')
    expect((await new SessionClient(t.app, '10.32.0.1').signUp(email)).statusCode).toBe(303)
    const address = '10.32.0.2'
    for (let i = 0; i < 20; i++) {
      expect((await new SessionClient(t.app, address).signUp(email)).statusCode).toBe(303)
    }
    const refused = await new SessionClient(t.app, address).signUp(uniqueEmail('fresh'))
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.body).toContain('Too many sign-ups from your address')
  }, 60_000)

  it('counts sign-ups sent at once from one address before doing any work for them', async () => {
    const address = '10.33.0.1'
    const browser = new SessionClient(t.app, address)
    await browser.get('/dashboard/sign-up')
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/dashboard/sign-up',
          remoteAddress: address,
          headers: { cookie: browser.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            _csrf: browser.csrf,
            email: uniqueEmail('burst'),
            password: PASSWORD,
          }).toString(),
        }),
      ),
    )
    const signedUp = answers.filter((a) => a.statusCode === 303)
    expect(signedUp.length).toBeLessThanOrEqual(20)
    expect(answers.every((a) => a.statusCode === 303 || a.statusCode === 429)).toBe(true)
  }, 60_000)
})
