import { findAccountByEmail, isEmail, normaliseEmail } from '../accounts/accounts-repository.ts'
import { hashPassword, verifyPassword } from '../accounts/passwords.ts'
import type { Db } from '../db/schema.ts'
import { markAttemptSucceeded } from './dashboard-repository.ts'
import { DEFAULT_SIGN_IN_LIMITS, reserveSignIn, type SignInLimits } from './sign-in-limits.ts'

export type SignInOutcome =
  | { kind: 'ok'; accountId: string; email: string }
  | { kind: 'invalid' }
  | { kind: 'limited'; retryAfterSeconds: number }

// Unknown emails are checked against this, so they take as long as known ones.
let dummyHash: Promise<string> | undefined

/**
 * One password sign-in, under the guessing limits of sign-in-limits.ts: the guess is counted
 * before the password is checked, and marked succeeded after, if it was right. Used
 * by the dashboard's sign-in form and by the OAuth sign-in page, so both count as one budget.
 */
export async function attemptSignIn(
  db: Db,
  attempt: { email: string; password: string; ip: string },
  limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
): Promise<SignInOutcome> {
  const email = normaliseEmail(attempt.email)
  if (!isEmail(email) || attempt.password === '') return { kind: 'invalid' }
  const reservation = await reserveSignIn(db, limits, { email, ip: attempt.ip })
  if (!reservation.allowed) return { kind: 'limited', retryAfterSeconds: reservation.retryAfterSeconds }
  dummyHash ??= hashPassword('no account has this password')
  const account = await findAccountByEmail(db, email)
  const valid = await verifyPassword(attempt.password, account?.password_hash ?? (await dummyHash))
  if (!valid || account === undefined || account.password_hash === null) return { kind: 'invalid' }
  await markAttemptSucceeded(db, reservation.seq)
  return { kind: 'ok', accountId: account.id, email }
}

export function minutesText(seconds: number): string {
  const m = Math.ceil(seconds / 60)
  return m <= 1 ? 'a minute' : `${m} minutes`
}
