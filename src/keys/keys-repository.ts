import type { Selectable } from 'kysely'
import type { ApiKeysTable, Db } from '../db/schema.ts'

export type ApiKeyRow = Selectable<ApiKeysTable>

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
}

export async function findApiKeyById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

/** Marks the key revoked; true when it was active until now. */
export async function revokeApiKey(db: Db, id: string, at: string, accountId?: string): Promise<boolean> {
  let query = db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
  if (accountId !== undefined) query = query.where('account_id', '=', accountId)
  const result = await query.executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function touchApiKey(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute()
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
