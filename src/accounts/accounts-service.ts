import type { Db } from '../db/schema.ts'
import { findAccountByEmail, insertAccount } from './accounts-repository.ts'

/**
 * Accounts as the other features use them (the dashboard, the sign-in, the OAuth pages, the
 * admin CLI): the repository's SQL stays inside this folder.
 */

export {
  type AccountRow,
  findAccountByEmail,
  findAccountById,
  findOrCreateAccount,
  findOrCreateSandbox,
  findSandboxOf,
  insertAccount,
  isEmail,
  lockAccount,
  normaliseEmail,
  setAccountPassword,
} from './accounts-repository.ts'

/**
 * A new account with a password, or undefined when the email has one already (checked first, and
 * again when the insert fails: the same email signed up twice at once, the unique index keeps one).
 */
export async function createAccountWithPassword(
  db: Db,
  email: string,
  passwordHash: string,
): Promise<string | undefined> {
  if ((await findAccountByEmail(db, email)) !== undefined) return undefined
  try {
    return (await insertAccount(db, { email, passwordHash })).id
  } catch (error) {
    if ((await findAccountByEmail(db, email)) !== undefined) return undefined
    throw error
  }
}

/** Live accounts hold real data; a sandbox is the separate account a live one tests against. */
export type AccountMode = 'live' | 'sandbox'

export function modeOf(account: { live_account_id: string | null }): AccountMode {
  return account.live_account_id === null ? 'live' : 'sandbox'
}
