import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { Db } from '../db/schema.ts'
import { sha256Hex } from '../lib/hash.ts'
import { nowIso } from '../lib/time.ts'
import { findClient } from './clients-repository.ts'
import { clientMetadata } from './clients-service.ts'

/**
 * oidc-provider's storage on our database, one table keyed by (model, id), where a model whose
 * id is a bearer secret is kept under the id's hash (docs/SECURITY.md, "OAuth tokens at rest").
 * Contract: https://github.com/panva/node-oidc-provider/blob/v9.x/example/my_adapter.js
 */
const SECRET_ID_MODELS = new Set([
  'RefreshToken',
  'AuthorizationCode',
  'ClientCredentials',
  'AccessToken',
  'Session',
])

export class DatabaseAdapter implements Adapter {
  readonly #secretIds: boolean

  constructor(
    private readonly db: Db,
    private readonly model: string,
    private readonly onGrantRevoked: (grantId: string) => Promise<void>,
  ) {
    this.#secretIds = SECRET_ID_MODELS.has(model)
  }

  /** The stored key for an id: its hash for secret-bearing models. */
  #key(id: string): string {
    return this.#secretIds ? sha256Hex(id) : id
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const stored: AdapterPayload = { ...payload }
    if (this.#secretIds && stored.jti === id) delete stored.jti
    if (this.model === 'Interaction' && stored.session !== undefined) {
      const { cookie: _sessionId, ...session } = stored.session
      stored.session = session
    }
    const row = {
      model: this.model,
      id: this.#key(id),
      payload: JSON.stringify(stored),
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
      .where('id', '=', this.#key(id))
      .executeTakeFirst()
    const payload = toPayload(row)
    if (payload !== undefined && this.#secretIds && payload.jti === undefined) payload.jti = id
    return payload
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
      .where('id', '=', this.#key(id))
      .execute()
  }

  async destroy(id: string): Promise<void> {
    await this.db
      .deleteFrom('oauth_store')
      .where('model', '=', this.model)
      .where('id', '=', this.#key(id))
      .execute()
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

/**
 * The stored grants (consents) that may be this account's: payloads are JSON text on both
 * dialects, so the account id is matched as a quoted literal (account ids are base62: nothing to
 * escape); src/oauth/grants-service.ts checks it again after parsing.
 */
export async function findGrantRowsOfAccount(
  db: Db,
  accountId: string,
): Promise<{ id: string; payload: string; expires_at: string | null }[]> {
  return db
    .selectFrom('oauth_store')
    .select(['id', 'payload', 'expires_at'])
    .where('model', '=', 'Grant')
    .where('payload', 'like', `%"accountId":${JSON.stringify(accountId)}%`)
    .execute()
}
