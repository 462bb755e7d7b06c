import type { Selectable } from 'kysely'
import { emailOfAccount, sandboxOfAccount } from '../accounts/account-statements.ts'
import type { DashboardSessionsTable, Db } from '../db/schema.ts'

/** The dashboard_sessions table: one row per signed-in browser (sessions.ts says what is kept). */

export type SessionRow = Selectable<DashboardSessionsTable>

export async function insertSession(db: Db, row: Omit<SessionRow, 'mode'>): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute()
}

/**
 * The session with this id hash, its account's email and the id of that account's sandbox (null
 * without one), if it has not expired at `now`.
 */
export async function findLiveSession(
  db: Db,
  idHash: string,
  now: string,
): Promise<(SessionRow & { email: string; sandbox_id: string | null }) | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .selectAll('dashboard_sessions')
    .select(emailOfAccount('dashboard_sessions.account_id').as('email'))
    .select(sandboxOfAccount('dashboard_sessions.account_id').as('sandbox_id'))
    .where('dashboard_sessions.id_hash', '=', idHash)
    .where('dashboard_sessions.expires_at', '>', now)
    .executeTakeFirst()
  // A session outlives no account (its rows cascade), but an email is all the caller may trust.
  return row?.email == null ? undefined : { ...row, email: row.email }
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute()
}

/** Ends every session of the account except `keepIdHash` (after a password change). */
export async function deleteOtherSessions(db: Db, accountId: string, keepIdHash: string): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where('account_id', '=', accountId)
    .where('id_hash', '!=', keepIdHash)
    .execute()
}

export async function deleteExpiredSessions(db: Db, now: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute()
}

/** Which of its account's two (live or sandbox) the session shows. */
export async function setSessionMode(db: Db, idHash: string, mode: 'live' | 'sandbox'): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ mode }).where('id_hash', '=', idHash).execute()
}
