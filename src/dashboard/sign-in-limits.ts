import type { Db } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'
import {
  countAttemptsFrom,
  countFailures,
  lastSuccessOf,
  purgeAttempts,
  recordAttempt,
} from './dashboard-repository.ts'

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

export interface LimitDecision {
  allowed: boolean
  retryAfterSeconds: number
}

function retryAfter(oldest: string | null, windowSeconds: number, now: number): number {
  if (oldest === null) return windowSeconds
  return Math.max(1, Math.ceil((Date.parse(oldest) + windowSeconds * 1000 - now) / 1000))
}

export async function checkSignIn(
  db: Db,
  limits: SignInLimits,
  attempt: { email: string; ip: string },
): Promise<LimitDecision> {
  const now = Date.now()
  const since = nowIso(now - limits.windowSeconds * 1000)
  const lastSuccess = await lastSuccessOf(db, attempt.email, since)
  const [byEmail, byIp] = await Promise.all([
    countFailures(db, 'sign_in', { email: attempt.email }, lastSuccess ?? since),
    countFailures(db, 'sign_in', { ip: attempt.ip }, since),
  ])
  if (byEmail.count >= limits.failuresPerAccount) {
    return { allowed: false, retryAfterSeconds: retryAfter(byEmail.oldest, limits.windowSeconds, now) }
  }
  if (byIp.count >= limits.failuresPerAddress) {
    return { allowed: false, retryAfterSeconds: retryAfter(byIp.oldest, limits.windowSeconds, now) }
  }
  return { allowed: true, retryAfterSeconds: 0 }
}

export async function checkSignUp(db: Db, limits: SignInLimits, ip: string): Promise<LimitDecision> {
  const count = await countAttemptsFrom(db, 'sign_up', ip, nowIso(Date.now() - 3_600_000))
  return count >= limits.signUpsPerAddressPerHour
    ? { allowed: false, retryAfterSeconds: 3600 }
    : { allowed: true, retryAfterSeconds: 0 }
}

export async function recordSignInAttempt(
  db: Db,
  attempt: { kind: 'sign_in' | 'sign_up'; email: string | null; ip: string; succeeded: boolean },
): Promise<void> {
  const now = Date.now()
  await recordAttempt(db, { ...attempt, at: nowIso(now) })
  // Attempts older than a day count for nothing; sweep them now and then.
  if (Math.random() < 0.02) await purgeAttempts(db, nowIso(now - 86_400_000))
}
