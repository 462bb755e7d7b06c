import type { Selectable } from 'kysely'
import type { Db, OAuthClientsTable } from '../db/schema.ts'

export type ClientRow = Selectable<OAuthClientsTable>

export async function insertClient(db: Db, row: ClientRow): Promise<void> {
  await db.insertInto('oauth_clients').values(row).execute()
}

export async function findClient(db: Db, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst()
}

export async function listClients(db: Db, accountId: string): Promise<ClientRow[]> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('client_id', 'desc')
    .execute()
}

/** Every client of every account, newest first (the admin CLI). */
export async function listAllClients(db: Db): Promise<ClientRow[]> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('client_id', 'desc')
    .execute()
}

export async function deleteClient(db: Db, clientId: string, accountId?: string): Promise<boolean> {
  let query = db.deleteFrom('oauth_clients').where('client_id', '=', clientId)
  if (accountId !== undefined) query = query.where('account_id', '=', accountId)
  const result = await query.executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Drops the provider's stored grants and tokens of a deleted client. */
export async function deleteStoredClientArtifacts(db: Db, clientId: string): Promise<void> {
  // Payloads are JSON text on both dialects; the client id is a quoted literal inside them.
  await db
    .deleteFrom('oauth_store')
    .where('payload', 'like', `%"clientId":${JSON.stringify(clientId)}%`)
    .execute()
}

/** Replaces a confidential OAuth client's secret hash (rotation); scoped to the account. */
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
    .where('client_type', '=', 'confidential')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
