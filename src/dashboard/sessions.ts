import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { Db } from '../db/schema.ts'
import { sha256Hex } from '../lib/hash.ts'
import { nowIso } from '../lib/time.ts'
import {
  deleteExpiredSessions,
  deleteOtherSessions,
  deleteSession,
  findLiveSession,
  insertSession,
  setSessionMode,
} from './sessions-repository.ts'

/**
 * Dashboard sessions: a random 256-bit id in an HttpOnly, SameSite=Lax cookie (Secure when the
 * request came over https, directly or through a trusted proxy); the database keeps only its
 * SHA-256, so a copy of the table cannot be replayed as cookies. Sessions last SESSION_DAYS from
 * sign-in; signing out deletes the row, so an old cookie is worthless at once.
 */
export const SESSION_COOKIE = 'pet_session'
export const SESSION_DAYS = 7

export interface DashboardSession {
  /** The account the pages show and change: the live account, or its sandbox (`mode`). */
  accountId: string
  /** The signed-in account, which owns the password, the sessions and the sandbox. */
  liveAccountId: string
  /** The live account's sandbox, null until one is created. */
  sandboxId: string | null
  mode: 'live' | 'sandbox'
  email: string
  idHash: string
}

export function cookieOptions(path = '/') {
  return { path, httpOnly: true, sameSite: 'lax', secure: 'auto' } as const
}

export async function startSession(
  db: Db,
  reply: FastifyReply,
  accountId: string,
  userAgent: string | undefined,
): Promise<string> {
  const id = randomBytes(32).toString('base64url')
  const idHash = sha256Hex(id)
  const now = Date.now()
  await insertSession(db, {
    id_hash: idHash,
    account_id: accountId,
    created_at: nowIso(now),
    expires_at: nowIso(now + SESSION_DAYS * 86_400_000),
    user_agent: userAgent?.slice(0, 300) ?? null,
  })
  // Now and then, sweep sessions that ran out (cheap: an indexed delete).
  if (Math.random() < 0.05) await deleteExpiredSessions(db, nowIso(now))
  setSessionCookie(reply, id)
  return idHash
}

function setSessionCookie(reply: FastifyReply, id: string): void {
  reply.setCookie(SESSION_COOKIE, id, { ...cookieOptions(), maxAge: SESSION_DAYS * 86_400 })
}

/**
 * A session cookie exactly like startSession's, for a session that does not exist (no row has
 * its hash): a sign-up whose email already has an account answers with it, so that its answer,
 * cookies included, is the one a new account gets. It opens nothing; the next page asks to sign in.
 */
export function setUnusableSessionCookie(reply: FastifyReply): void {
  setSessionCookie(reply, randomBytes(32).toString('base64url'))
}

/** The signed-in account behind a session cookie's value, or null. */
export async function sessionFromCookie(db: Db, value: string | undefined): Promise<DashboardSession | null> {
  if (value === undefined || value === '' || value.length > 100) return null
  const idHash = sha256Hex(value)
  const row = await findLiveSession(db, idHash, nowIso())
  if (row === undefined) return null
  const mode = row.mode === 'sandbox' && row.sandbox_id !== null ? 'sandbox' : 'live'
  return {
    accountId: mode === 'sandbox' && row.sandbox_id !== null ? row.sandbox_id : row.account_id,
    liveAccountId: row.account_id,
    sandboxId: row.sandbox_id,
    mode,
    email: row.email,
    idHash,
  }
}

/** Shows the live account or its sandbox from the next page on. */
export async function switchSessionMode(db: Db, idHash: string, mode: 'live' | 'sandbox'): Promise<void> {
  await setSessionMode(db, idHash, mode)
}

export async function endSession(db: Db, reply: FastifyReply, idHash: string): Promise<void> {
  await deleteSession(db, idHash)
  reply.clearCookie(SESSION_COOKIE, cookieOptions())
}

/** Ends every session of the account but `keepIdHash` (after a password change; '' ends all). */
export async function endOtherSessions(db: Db, accountId: string, keepIdHash: string): Promise<void> {
  await deleteOtherSessions(db, accountId, keepIdHash)
}
