import { unmatchableHash, verifyPassword } from '../accounts/passwords.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { randomIdText } from '../lib/ids.ts'
import { nowIso } from '../lib/time.ts'
import { countedGuess } from '../sign-in/sign-in.ts'
import { DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from '../sign-in/sign-in-limits.ts'
import { findUserByUsername } from './users-repository.ts'

/** How long the session string of a login is said to last (`X-Expires-After`). */
export const LOGIN_SESSION_SECONDS = 3600

// Unknown usernames (and users without a password) are checked against this, so they take as
// long as known ones and a caller cannot tell which usernames exist from the time it takes.
const UNMATCHABLE_HASH = unmatchableHash()

export interface LoginResult {
  /**
   * What the Petstore's login answers: `logged in user session:` and an opaque random text.
   * It grants nothing (every call still needs the account's bearer token) and is not stored.
   */
  session: string
  expiresAt: string
}

function retryLater(retryAfterSeconds: number, why: string): ApiError {
  return new ApiError('rate_limited', `${why}; retry in ${retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  })
}

/**
 * The Petstore's `GET /user/login`: checks a user's password (its stored scrypt hash) under the
 * same guessing limits as the dashboard's sign-in (src/sign-in/), counted per username of the
 * account and per client address, with budgets of their own. The scrypt work is charged to the
 * account. A wrong password and an unknown username answer alike: 400 login_failed.
 */
export async function logInUser(
  db: Db,
  accountId: string,
  attempt: { username: string; password: string; ip: string },
  limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
): Promise<LoginResult> {
  const user = await findUserByUsername(db, accountId, attempt.username)
  const guess = { kind: 'user_login' as const, email: `${accountId}:${attempt.username}`, ip: attempt.ip }
  const outcome = await countedGuess(db, limits, guess, () =>
    verifyPassword(attempt.password, user?.passwordHash ?? UNMATCHABLE_HASH, { account: accountId }),
  )
  switch (outcome.kind) {
    case 'right':
      return {
        session: `logged in user session:${randomIdText(24)}`,
        expiresAt: nowIso(Date.now() + LOGIN_SESSION_SECONDS * 1000),
      }
    case 'wrong':
      throw new ApiError('login_failed', 'Invalid username/password supplied.')
    case 'limited':
      throw retryLater(
        outcome.retryAfterSeconds,
        'Too many failed logins for this username or from your address',
      )
    case 'busy':
      throw retryLater(
        outcome.retryAfterSeconds,
        'Too many passwords of your account are being checked at once',
      )
  }
}
