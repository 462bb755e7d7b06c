import { PostgresAdapter, type Selectable, sql } from 'kysely'
import { isScope, type Scope } from '../access/scopes.ts'
import type { DashboardSessionsTable, Db } from '../db/schema.ts'

/** SQL the dashboard needs beyond what the accounts, keys, pets and users repositories offer. */

export type SessionRow = Selectable<DashboardSessionsTable>

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute()
}

/** The session with this id hash and its account's email, if it has not expired at `now`. */
export async function findLiveSession(
  db: Db,
  idHash: string,
  now: string,
): Promise<(SessionRow & { email: string }) | undefined> {
  return db
    .selectFrom('dashboard_sessions')
    .innerJoin('accounts', 'accounts.id', 'dashboard_sessions.account_id')
    .selectAll('dashboard_sessions')
    .select('accounts.email')
    .where('dashboard_sessions.id_hash', '=', idHash)
    .where('dashboard_sessions.expires_at', '>', now)
    .executeTakeFirst()
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

/** Records an attempt; returns its row number (to mark it succeeded once the password is checked). */
export async function recordAttempt(
  db: Db,
  attempt: { kind: 'sign_in' | 'sign_up'; email: string | null; ip: string; succeeded: boolean; at: string },
): Promise<number> {
  const row = await db
    .insertInto('sign_in_attempts')
    .values({
      kind: attempt.kind,
      email: attempt.email,
      ip: attempt.ip,
      succeeded: attempt.succeeded ? 1 : 0,
      created_at: attempt.at,
    })
    .returning('seq')
    .executeTakeFirstOrThrow()
  return Number(row.seq)
}

export async function markAttemptSucceeded(db: Db, seq: number): Promise<void> {
  await db.updateTable('sign_in_attempts').set({ succeeded: 1 }).where('seq', '=', seq).execute()
}

/** Forgets an attempt that was counted but never checked (the password work was refused). */
export async function deleteAttempt(db: Db, seq: number): Promise<void> {
  await db.deleteFrom('sign_in_attempts').where('seq', '=', seq).execute()
}

/**
 * Makes the rest of the transaction `trx` the only one counting and recording attempts for these
 * keys (an email, an address), until it ends. SQLite needs nothing: a transaction holds the
 * database's one write lock from its start (src/db/sqlite-group-commit.ts). PostgreSQL takes an
 * advisory transaction lock per key
 * (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS); callers name keys in
 * a fixed order (email, then address), so two transactions never wait on each other in a cycle.
 */
export async function lockAttemptKeys(trx: Db, keys: { scope: string; value: string }[]): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return
  for (const key of keys) {
    await sql`select pg_advisory_xact_lock(hashtext(${key.scope}), hashtext(${key.value}))`.execute(trx)
  }
}

/** Failed attempts of a kind since `since`, by email or by address; with the oldest one's time. */
export async function countFailures(
  db: Db,
  kind: 'sign_in' | 'sign_up',
  by: { email: string } | { ip: string },
  since: string,
): Promise<{ count: number; oldest: string | null }> {
  let q = db
    .selectFrom('sign_in_attempts')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('kind', '=', kind)
    .where('succeeded', '=', 0)
    .where('created_at', '>', since)
  q = 'email' in by ? q.where('email', '=', by.email) : q.where('ip', '=', by.ip)
  const row = await q.executeTakeFirstOrThrow()
  return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null }
}

/** When this email last signed in successfully after `since` (null: not since then). */
export async function lastSuccessOf(db: Db, email: string, since: string): Promise<string | null> {
  const row = await db
    .selectFrom('sign_in_attempts')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('kind', '=', 'sign_in')
    .where('email', '=', email)
    .where('succeeded', '=', 1)
    .where('created_at', '>', since)
    .executeTakeFirst()
  return (row?.at as string | null | undefined) ?? null
}

/** Attempts of a kind from an address since `since`, successful or not (sign-ups); with the oldest one's time. */
export async function countAttemptsFrom(
  db: Db,
  kind: 'sign_in' | 'sign_up',
  ip: string,
  since: string,
): Promise<{ count: number; oldest: string | null }> {
  const row = await db
    .selectFrom('sign_in_attempts')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('kind', '=', kind)
    .where('ip', '=', ip)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow()
  return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null }
}

export async function purgeAttempts(db: Db, before: string): Promise<void> {
  await db.deleteFrom('sign_in_attempts').where('created_at', '<', before).execute()
}

/**
 * Brings a key's expiry forward to `at` (never pushes it later), for rolling keys. Scoped to the
 * account: true when the key was found there and is not revoked.
 */
export async function expireApiKeyAt(db: Db, accountId: string, id: string, at: string): Promise<boolean> {
  const key = await db
    .selectFrom('api_keys')
    .select(['expires_at'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (key === undefined) return false
  if (key.expires_at !== null && key.expires_at <= at) return true
  await db.updateTable('api_keys').set({ expires_at: at }).where('id', '=', id).execute()
  return true
}

export async function countUsers(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The account's distinct pet species, for the filter's choices. */
export async function listSpecies(db: Db, accountId: string, limit = 100): Promise<string[]> {
  const rows = await db
    .selectFrom('pets')
    .select('species')
    .distinct()
    .where('account_id', '=', accountId)
    .where('species', 'is not', null)
    .orderBy('species')
    .limit(limit)
    .execute()
  return rows.map((r) => r.species).filter((s): s is string => s !== null)
}

/** Users' names by id, for the owner column and filter (the first `limit` by name). */
export async function listUserNames(
  db: Db,
  accountId: string,
  limit = 200,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .limit(limit)
    .execute()
}

export async function userNamesByIds(db: Db, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute()
  return new Map(rows.map((r) => [r.id, r.name]))
}

/** Pets per owner for the given users, in one query. */
export async function countPetsByOwners(
  db: Db,
  accountId: string,
  ownerIds: string[],
): Promise<Map<string, number>> {
  if (ownerIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('pets')
    .select(['owner_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .where('owner_id', 'in', ownerIds)
    .groupBy('owner_id')
    .execute()
  return new Map(rows.map((r) => [r.owner_id ?? '', Number(r.n)]))
}

/** Replaces an OAuth client's secret hash (rotation); scoped to the account. */
export async function setClientSecretHash(
  db: Db,
  accountId: string,
  clientId: string,
  secretHash: string,
): Promise<boolean> {
  const result = await db
    .updateTable('oauth_clients')
    .set({ secret_hash: secretHash })
    .where('client_id', '=', clientId)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * The live grants (consents) this account gave OAuth clients, read from the provider's store.
 * Payloads are JSON text on both dialects, so the account id is matched as a quoted literal
 * (account ids are base62: nothing to escape), then checked again after parsing.
 */
export async function findGrantsOfAccount(
  db: Db,
  accountId: string,
): Promise<
  { id: string; clientId: string; scopes: Scope[]; grantedAt: string | null; expiresAt: string | null }[]
> {
  const rows = await db
    .selectFrom('oauth_store')
    .select(['id', 'payload', 'expires_at'])
    .where('model', '=', 'Grant')
    .where('payload', 'like', `%"accountId":${JSON.stringify(accountId)}%`)
    .execute()
  const now = new Date().toISOString()
  const grants = []
  for (const row of rows) {
    if (row.expires_at !== null && row.expires_at <= now) continue
    const payload = JSON.parse(row.payload) as {
      accountId?: string
      clientId?: string
      iat?: number
      resources?: Record<string, string>
    }
    if (payload.accountId !== accountId || payload.clientId === undefined) continue
    const scopes = [
      ...new Set(
        Object.values(payload.resources ?? {})
          .flatMap((s) => s.split(' '))
          .filter(isScope),
      ),
    ]
    grants.push({
      id: row.id,
      clientId: payload.clientId,
      scopes,
      grantedAt: payload.iat === undefined ? null : new Date(payload.iat * 1000).toISOString(),
      expiresAt: row.expires_at,
    })
  }
  return grants.sort((a, b) => (b.grantedAt ?? '').localeCompare(a.grantedAt ?? ''))
}
