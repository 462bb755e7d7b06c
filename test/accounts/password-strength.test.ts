import { describe, expect, it } from 'vitest'
import { checkPasswordStrength } from '../../src/accounts/password-strength.ts'
import { useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

const EMAIL = 'ada.lovelace@example.com'

describe('password strength (zxcvbn-ts)', () => {
  it.each(['Password1!', 'Qwerty123!', 'Summer2024!', 'Welcome2025#', 'iloveyou12345'])(
    'refuses %s, which a dictionary attack finds at once, and says why',
    (password) => {
      const verdict = checkPasswordStrength(password, EMAIL)
      expect(verdict.ok).toBe(false)
      expect(verdict.ok === false && verdict.reason).toMatch(/^Too easy to guess\. .+/)
    },
  )

  it('names a common password as such', () => {
    const verdict = checkPasswordStrength('Password1!', EMAIL)
    expect(verdict.ok === false && verdict.reason).toContain('commonly used password')
  })

  it.each(['lighthouse-harbour-37', 'purple-otter-sings-42', 'green-kettle-dances-77', 'kT9#vq2!Lm-x'])(
    'accepts %s',
    (password) => {
      expect(checkPasswordStrength(password, EMAIL)).toMatchObject({ ok: true })
    },
  )

  it('refuses passwords shorter than 10 or longer than 200 characters, or holding the email', () => {
    expect(checkPasswordStrength('x7#Kq!2v', EMAIL)).toMatchObject({
      ok: false,
      reason: 'Use at least 10 characters.',
    })
    expect(checkPasswordStrength('lighthouse-'.repeat(20), EMAIL)).toMatchObject({ ok: false })
    expect(checkPasswordStrength('ada.lovelace-harbour-37', EMAIL)).toMatchObject({
      ok: false,
      reason: 'Your password must not contain your email address.',
    })
  })
})

describeDb('dashboard sign-up password check', () => {
  const t = useTestApp()

  it('refuses Summer2024! at sign-up with the reason, and creates no account', async () => {
    const browser = new SessionClient(t.app)
    const res = await browser.signUp('new.user@example.com', 'Summer2024!')
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('Too easy to guess.')
    expect(
      await t.database.db
        .selectFrom('accounts')
        .where('email', '=', 'new.user@example.com')
        .select('id')
        .executeTakeFirst(),
    ).toBeUndefined()
  })
})
