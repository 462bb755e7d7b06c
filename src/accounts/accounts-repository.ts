import type { Selectable } from 'kysely'
import { isPostgres } from '../db/dialect.ts'
import type { AccountsTable, Db } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import { nowIso } from '../lib/time.ts'

export type AccountRow = Selectable<AccountsTable>

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase()
}

export async function findAccountByEmail(db: Db, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst()
}

export async function findAccountById(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function insertAccount(
  db: Db,
  input: { email: string; passwordHash?: string | null },
): Promise<AccountRow> {
  const row: AccountRow = {
    id: newId('acct'),
    email: normaliseEmail(input.email),
    password_hash: input.passwordHash ?? null,
    created_at: nowIso(),
    live_account_id: null,
  }
  await db.insertInto('accounts').values(row).execute()
  return row
}

/** The account with this email, created (without a password) when there is none. */
export async function findOrCreateAccount(
  db: Db,
  email: string,
): Promise<{ account: AccountRow; created: boolean }> {
  const existing = await findAccountByEmail(db, email)
  if (existing !== undefined) return { account: existing, created: false }
  const id = newId('acct')
  // Two callers may create the same account at once: the loser of the race reads the winner's row.
  await db
    .insertInto('accounts')
    .values({
      id,
      email: normaliseEmail(email),
      password_hash: null,
      created_at: nowIso(),
      live_account_id: null,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .execute()
  const account = await findAccountByEmail(db, email)
  if (account === undefined) throw new Error(`account ${email} vanished right after it was created`)
  return { account, created: account.id === id }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value.trim())
}

export async function setAccountPassword(db: Db, accountId: string, passwordHash: string): Promise<void> {
  await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).execute()
}

/**
 * Makes the account's writes that call this take turns until the caller's transaction ends (the
 * uploads of images, against the account's quota). PostgreSQL only (NO KEY UPDATE leaves the
 * foreign-key checks of the account's other writes alone); SQLite runs one write transaction at
 * a time already.
 */
export async function lockAccount(db: Db, accountId: string): Promise<void> {
  if (!isPostgres(db)) return
  await db.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute()
}

/** The sandbox of a live account, if it has one. */
export async function findSandboxOf(db: Db, liveAccountId: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('live_account_id', '=', liveAccountId).executeTakeFirst()
}

/**
 * The live account's sandbox, created when it has none. A sandbox has no password and no email
 * of its own (it is reached through its live account): its `email` column holds a placeholder
 * without an `@`, which no sign-up can ever take.
 */
export async function findOrCreateSandbox(
  db: Db,
  liveAccountId: string,
): Promise<{ account: AccountRow; created: boolean }> {
  const existing = await findSandboxOf(db, liveAccountId)
  if (existing !== undefined) return { account: existing, created: false }
  const id = newId('acct')
  // Two clicks at once: the unique index on live_account_id keeps one, the other reads it.
  await db
    .insertInto('accounts')
    .values({
      id,
      email: `sandbox:${liveAccountId}`,
      password_hash: null,
      created_at: nowIso(),
      live_account_id: liveAccountId,
    })
    .onConflict((oc) => oc.column('live_account_id').doNothing())
    .execute()
  const account = await findSandboxOf(db, liveAccountId)
  if (account === undefined)
    throw new Error(`the sandbox of ${liveAccountId} vanished right after it was created`)
  return { account, created: account.id === id }
}
