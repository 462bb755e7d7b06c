import { sql } from 'kysely'
import { isPostgres } from '../db/dialect.ts'
import type { Db } from '../db/schema.ts'

/** Password guesses at an account (`sign_in`) or at a user of one (`user_login`, v2), and sign-ups. */
export type AttemptKind = 'sign_in' | 'user_login' | 'sign_up'

/** The sign_in_attempts table: every password guess and sign-up, counted by sign-in-limits.ts. */

/** Records an attempt; returns its row number (to mark it succeeded once the password is checked). */
export async function recordAttempt(
  db: Db,
  attempt: { kind: AttemptKind; email: string | null; ip: string; succeeded: boolean; at: string },
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
  if (!isPostgres(trx)) return
  for (const key of keys) {
    await sql`select pg_advisory_xact_lock(hashtext(${key.scope}), hashtext(${key.value}))`.execute(trx)
  }
}

/** Failed attempts of a kind since `since`, by email or by address; with the oldest one's time. */
export async function countFailures(
  db: Db,
  kind: AttemptKind,
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
export async function lastSuccessOf(
  db: Db,
  kind: AttemptKind,
  email: string,
  since: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('sign_in_attempts')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('kind', '=', kind)
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
