import { randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import type { Db } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'

export const SIGNING_ALG = 'ES256'

export interface OAuthKeys {
  /** Private signing key of the provider (JWT access tokens). */
  signing: JWK
  /** Public half, what the resource server verifies against (and /oauth/jwks publishes). */
  verification: JWK
  /** Secrets that sign the provider's cookies. */
  cookies: string[]
}

/**
 * The provider's keys live in the database so that every instance signs and verifies with the
 * same ones. The first instance to start creates them; a concurrent starter loses the insert
 * race and reads the winner's.
 */
export async function loadOrCreateKeys(db: Db): Promise<OAuthKeys> {
  const signing = await loadOrCreate(db, 'signing', async () => {
    const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true })
    const jwk = await exportJWK(privateKey)
    return { ...jwk, alg: SIGNING_ALG, use: 'sig', kid: randomBytes(8).toString('base64url') }
  })
  const cookies = await loadOrCreate(db, 'cookies', async () => [randomBytes(32).toString('base64url')])
  const { d: _private, ...verification } = signing as JWK & { d?: string }
  return { signing: signing as JWK, verification, cookies: cookies as string[] }
}

/** A value shared by every instance through the database, created by the first to need it. */
export async function loadOrCreate(db: Db, id: string, create: () => Promise<unknown>): Promise<unknown> {
  const existing = await db.selectFrom('oauth_keys').select('value').where('id', '=', id).executeTakeFirst()
  if (existing !== undefined) return JSON.parse(existing.value)
  await db
    .insertInto('oauth_keys')
    .values({ id, value: JSON.stringify(await create()), created_at: nowIso() })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  const row = await db.selectFrom('oauth_keys').select('value').where('id', '=', id).executeTakeFirstOrThrow()
  return JSON.parse(row.value)
}
