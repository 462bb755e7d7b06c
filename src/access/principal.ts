import type { Scope } from './scopes.ts'

/** Who is calling: the account every record read or written belongs to, and what it may do. */
export interface Principal {
  accountId: string
  /** null: every scope (an unrestricted API key). */
  scopes: ReadonlySet<Scope> | null
  via: 'api_key' | 'oauth'
  credentialId: string
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes === null || principal.scopes.has(scope)
}
