import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { Db } from '../db/schema.ts'
import { nowIso } from '../lib/time.ts'
import { findClient } from './clients-repository.ts'
import { clientMetadata } from './clients-service.ts'

/**
 * oidc-provider's storage on our database: one table for every model (Session, Grant,
 * AuthorizationCode, RefreshToken, Interaction, …), keyed by (model, id). JWT access tokens are
 * never stored (RFC 9068 tokens are verified by signature); the Client model is read from
 * `oauth_clients`, so clients are managed by us and their secrets stay hashed.
 * Contract: https://github.com/panva/node-oidc-provider/blob/v9.x/example/my_adapter.js
 */
export class DatabaseAdapter implements Adapter {
  constructor(
    private readonly db: Db,
    private readonly model: string,
    private readonly onGrantRevoked: (grantId: string) => Promise<void>,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const row = {
      model: this.model,
      id,
      payload: JSON.stringify(payload),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      expires_at: expiresIn > 0 ? nowIso(Date.now() + expiresIn * 1000) : null,
      consumed_at: null,
    }
    await this.db
      .insertInto('oauth_store')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['model', 'id']).doUpdateSet({
          payload: row.payload,
          grant_id: row.grant_id,
          uid: row.uid,
          expires_at: row.expires_at,
        }),
      )
      .execute()
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.model === 'Client') {
      const client = await findClient(this.db, id)
      return client === undefined ? undefined : clientMetadata(client)
    }
    const row = await this.db
      .selectFrom('oauth_store')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where('model', '=', this.model)
      .where('id', '=', id)
      .executeTakeFirst()
    return toPayload(row)
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.db
      .selectFrom('oauth_store')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where('model', '=', this.model)
      .where('uid', '=', uid)
      .executeTakeFirst()
    return toPayload(row)
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    return undefined // the device flow is not enabled
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable('oauth_store')
      .set({ consumed_at: nowIso() })
      .where('model', '=', this.model)
      .where('id', '=', id)
      .execute()
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom('oauth_store').where('model', '=', this.model).where('id', '=', id).execute()
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db
      .deleteFrom('oauth_store')
      .where('model', '=', this.model)
      .where('grant_id', '=', grantId)
      .execute()
    // JWT access tokens are not stored: record the grant as revoked so they are refused too.
    if (this.model === 'AccessToken') await this.onGrantRevoked(grantId)
  }
}

function toPayload(
  row: { payload: string; expires_at: string | null; consumed_at: string | null } | undefined,
): AdapterPayload | undefined {
  if (row === undefined) return undefined
  if (row.expires_at !== null && row.expires_at <= nowIso()) return undefined
  const payload = JSON.parse(row.payload) as AdapterPayload
  if (row.consumed_at !== null) payload.consumed = Math.floor(Date.parse(row.consumed_at) / 1000)
  return payload
}

/** Removes expired rows; run now and then. */
export async function purgeExpiredOAuthRows(db: Db): Promise<void> {
  await db.deleteFrom('oauth_store').where('expires_at', '<', nowIso()).execute()
}
