import { findAccountByEmail, isEmail, normaliseEmail } from '../accounts/accounts-service.ts'
import { PasswordWorkBusyError } from '../accounts/password-work.ts'
import { unmatchableHash, verifyPassword } from '../accounts/passwords.ts'
import type { Db } from '../db/schema.ts'
import {
  attemptNotChecked,
  attemptSucceeded,
  DEFAULT_SIGN_IN_LIMITS,
  type Guess,
  reserveSignIn,
  type SignInLimits,
} from './sign-in-limits.ts'

export type GuessOutcome =
  | { kind: 'right' }
  | { kind: 'wrong' }
  /** The guessing limits are used up. */
  | { kind: 'limited'; retryAfterSeconds: number }
  /** Too much password work of this party is waiting (src/accounts/password-work.ts). */
  | { kind: 'busy'; retryAfterSeconds: number }

/**
 * One password guess for an email, from an address, under the guessing limits of
 * sign-in-limits.ts: counted before `check` runs, marked succeeded after if it was right.
 * A guess whose check was refused for lack of capacity was never checked, so it is not counted.
 */
export async function countedGuess(
  db: Db,
  limits: SignInLimits,
  guess: Guess,
  check: () => Promise<boolean>,
): Promise<GuessOutcome> {
  const reservation = await reserveSignIn(db, limits, guess)
  if (!reservation.allowed) return { kind: 'limited', retryAfterSeconds: reservation.retryAfterSeconds }
  let right: boolean
  try {
    right = await check()
  } catch (error) {
    if (!(error instanceof PasswordWorkBusyError)) throw error
    await attemptNotChecked(db, reservation.seq)
    return { kind: 'busy', retryAfterSeconds: error.retryAfterSeconds }
  }
  if (!right) return { kind: 'wrong' }
  await attemptSucceeded(db, reservation.seq)
  return { kind: 'right' }
}

export type SignInOutcome =
  | { kind: 'ok'; accountId: string; email: string }
  | { kind: 'invalid' }
  | { kind: 'limited'; retryAfterSeconds: number }
  | { kind: 'busy'; retryAfterSeconds: number }

// Unknown emails (and accounts without a password) are checked against this, so they take as
// long as known ones.
const UNMATCHABLE_HASH = unmatchableHash()

/**
 * One password sign-in (countedGuess). Used by the dashboard's sign-in form and by the OAuth
 * sign-in page, so both count as one budget. The scrypt work is charged to the client's address.
 */
export async function attemptSignIn(
  db: Db,
  attempt: { email: string; password: string; ip: string },
  limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
): Promise<SignInOutcome> {
  const email = normaliseEmail(attempt.email)
  if (!isEmail(email) || attempt.password === '') return { kind: 'invalid' }
  const account = await findAccountByEmail(db, email)
  const outcome = await countedGuess(db, limits, { email, ip: attempt.ip }, () =>
    verifyPassword(attempt.password, account?.password_hash ?? UNMATCHABLE_HASH, { address: attempt.ip }),
  )
  if (outcome.kind === 'right' && account !== undefined) return { kind: 'ok', accountId: account.id, email }
  return outcome.kind === 'right' || outcome.kind === 'wrong' ? { kind: 'invalid' } : outcome
}

export function minutesText(seconds: number): string {
  const m = Math.ceil(seconds / 60)
  return m <= 1 ? 'a minute' : `${m} minutes`
}

/** For a busy answer: "a few seconds", "a minute", "3 minutes". */
export function busyText(seconds: number): string {
  return seconds < 30 ? 'a few seconds' : minutesText(seconds)
}
