import type Provider from 'oidc-provider'
import { isScope, type Scope } from '../access/scopes.ts'
import type { Db } from '../db/schema.ts'
import { findGrantRowsOfAccount } from './oauth-store.ts'

/** A consent an account holder gave an OAuth client through /oauth/authorize. */
export interface GrantInfo {
  id: string
  clientId: string
  scopes: Scope[]
  grantedAt: string | null
  expiresAt: string | null
}

/** The live grants this account gave, newest first, read from the provider's store. */
export async function grantsOfAccount(db: Db, accountId: string): Promise<GrantInfo[]> {
  const rows = await findGrantRowsOfAccount(db, accountId)
  const now = new Date().toISOString()
  const grants: GrantInfo[] = []
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

/**
 * Revokes one of the account's grants as the provider itself does (lib/helpers/revoke.js): its
 * tokens, then the grant. False when the account has no such live grant.
 */
export async function revokeGrantOfAccount(
  db: Db,
  provider: Provider,
  accountId: string,
  grantId: string,
): Promise<boolean> {
  const grant = (await grantsOfAccount(db, accountId)).find((g) => g.id === grantId)
  if (grant === undefined) return false
  await Promise.all([
    provider.AccessToken.revokeByGrantId(grantId),
    provider.RefreshToken.revokeByGrantId(grantId),
    provider.AuthorizationCode.revokeByGrantId(grantId),
  ])
  await provider.Grant.adapter.destroy(grantId)
  return true
}
