import type { Db } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'
import {
  type AttemptKind,
  countAttemptsFrom,
  countFailures,
  deleteAttempt,
  lastSuccessOf,
  lockAttemptKeys,
  markAttemptSucceeded,
  purgeAttempts,
  recordAttempt,
} from './attempts-repository.ts'

/**
 * Password guessing limits, kept in the database so every instance shares them (no Redis
 * needed). Failures are counted in a sliding window per account (email) and per client
 * address: the first stops a slow distributed attack on one account, the second one address
 * trying many accounts. An account's count restarts after each successful sign-in (so its owner's
 * typos never add up); an address's does not (an attacker could sign in to an account of their
 * own to reset it). While a limit holds even the right password is refused, or it would be no
 * limit. Sign-ups are limited per address too (each one costs a scrypt hash).
 */
export interface SignInLimits {
  windowSeconds: number
  failuresPerAccount: number
  failuresPerAddress: number
  signUpsPerAddressPerHour: number
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  windowSeconds: 15 * 60,
  failuresPerAccount: 10,
  failuresPerAddress: 20,
  signUpsPerAddressPerHour: 20,
}

/**
 * A password guess: at an account's password (`sign_in`, keyed by its email), or at a v2 user's
 * (`user_login`, keyed by account and username). Each kind has its own budgets, so a test suite
 * failing user logins never locks its address out of the dashboard.
 */
export interface Guess {
  email: string
  ip: string
  kind?: Exclude<AttemptKind, 'sign_up'>
}

export type Reservation = { allowed: true; seq: number } | { allowed: false; retryAfterSeconds: number }

function retryAfter(oldest: string | null, windowSeconds: number, now: number): number {
  if (oldest === null) return windowSeconds
  return Math.max(1, Math.ceil((Date.parse(oldest) + windowSeconds * 1000 - now) / 1000))
}

/** How long until this guess may be made, or null when the limits allow it now. */
async function signInRefusal(
  db: Db,
  limits: SignInLimits,
  attempt: Guess,
  now: number,
): Promise<number | null> {
  const kind = attempt.kind ?? 'sign_in'
  const since = nowIso(now - limits.windowSeconds * 1000)
  const lastSuccess = await lastSuccessOf(db, kind, attempt.email, since)
  const byEmail = await countFailures(db, kind, { email: attempt.email }, lastSuccess ?? since)
  if (byEmail.count >= limits.failuresPerAccount) return retryAfter(byEmail.oldest, limits.windowSeconds, now)
  const byIp = await countFailures(db, kind, { ip: attempt.ip }, since)
  if (byIp.count >= limits.failuresPerAddress) return retryAfter(byIp.oldest, limits.windowSeconds, now)
  return null
}

/**
 * Counts a password guess before it is checked: in one transaction that no other guess at the
 * same email or address can interleave with (lockAttemptKeys), refuses it when the limits are
 * used up, else records it as failed. The caller checks the password only when allowed, then
 * marks the attempt succeeded (attemptSucceeded) if it was right. Counting after the check
 * let a burst of guesses sent at once all pass the check before any was recorded.
 */
export async function reserveSignIn(db: Db, limits: SignInLimits, attempt: Guess): Promise<Reservation> {
  // Once the limits are used up they stay so until the window moves on: refuse the rest of a
  // burst without queueing for the locks (on PostgreSQL each waiter holds a pooled connection).
  const early = await signInRefusal(db, limits, attempt, Date.now())
  if (early !== null) return { allowed: false, retryAfterSeconds: early }
  const reservation = await db.transaction().execute(async (trx): Promise<Reservation> => {
    await lockAttemptKeys(trx, [
      { scope: 'sign_in_attempts.email', value: attempt.email },
      { scope: 'sign_in_attempts.ip', value: attempt.ip },
    ])
    const now = Date.now()
    const refusal = await signInRefusal(trx, limits, attempt, now)
    if (refusal !== null) return { allowed: false, retryAfterSeconds: refusal }
    const seq = await recordAttempt(trx, {
      kind: attempt.kind ?? 'sign_in',
      email: attempt.email,
      ip: attempt.ip,
      succeeded: false,
      at: nowIso(now),
    })
    return { allowed: true, seq }
  })
  await sweepNowAndThen(db)
  return reservation
}

/**
 * Counts a sign-up attempt before any work is done for it, whatever its outcome (a new account,
 * or an email that already has one), the same way reserveSignIn counts guesses.
 */
export async function reserveSignUp(
  db: Db,
  limits: SignInLimits,
  attempt: { email: string; ip: string },
): Promise<Reservation> {
  const reservation = await db.transaction().execute(async (trx): Promise<Reservation> => {
    await lockAttemptKeys(trx, [{ scope: 'sign_up_attempts.ip', value: attempt.ip }])
    const now = Date.now()
    const recent = await countAttemptsFrom(trx, 'sign_up', attempt.ip, nowIso(now - 3_600_000))
    if (recent.count >= limits.signUpsPerAddressPerHour) {
      return { allowed: false, retryAfterSeconds: retryAfter(recent.oldest, 3600, now) }
    }
    const seq = await recordAttempt(trx, { kind: 'sign_up', ...attempt, succeeded: false, at: nowIso(now) })
    return { allowed: true, seq }
  })
  await sweepNowAndThen(db)
  return reservation
}

/** A reserved attempt that went through (the right password, an account created): a success. */
export async function attemptSucceeded(db: Db, seq: number): Promise<void> {
  await markAttemptSucceeded(db, seq)
}

/** A reserved attempt whose password work was refused for lack of capacity: never checked, not counted. */
export async function attemptNotChecked(db: Db, seq: number): Promise<void> {
  await deleteAttempt(db, seq)
}

async function sweepNowAndThen(db: Db): Promise<void> {
  // Attempts older than a day count for nothing; sweep them now and then.
  if (Math.random() < 0.02) await purgeAttempts(db, nowIso(Date.now() - 86_400_000))
}
