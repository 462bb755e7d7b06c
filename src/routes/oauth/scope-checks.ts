import type { IncomingMessage, ServerResponse } from 'node:http'
import { ALL_SCOPES, parseScopes } from '../../access/scopes.ts'
import type { Db } from '../../db/schema.ts'
import { findClient } from '../../oauth/clients-service.ts'

/**
 * The scope checks oidc-provider leaves out: it drops unknown scopes silently, where RFC 6749
 * asks for `invalid_scope`.
 */

/**
 * RFC 6749 §4.1.2.1: an authorization request naming a scope this server does not know is
 * answered `invalid_scope` at the client's redirect URI (once client and URI are known good;
 * otherwise the provider's own checks answer). Known scopes the client is not registered for
 * are refused by the provider itself.
 */
export async function refuseUnknownScopes(
  issuer: string,
  db: Db,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '')
  const scope = query.get('scope')
  if (scope === null) return false
  const { unknown } = parseScopes(scope)
  if (unknown.length === 0 || query.getAll('scope').length > 1) return false
  const clientId = query.get('client_id')
  const client = clientId === null ? undefined : await findClient(db, clientId)
  if (client === undefined) return false
  const registered = JSON.parse(client.redirect_uris) as string[]
  const redirectUri = query.get('redirect_uri') ?? (registered.length === 1 ? registered[0] : undefined)
  if (redirectUri === undefined || !registered.includes(redirectUri)) return false
  const target = new URL(redirectUri)
  target.searchParams.set('error', 'invalid_scope')
  target.searchParams.set('error_description', `unknown scope ${unknown.join(', ')}`)
  const state = query.get('state')
  if (state !== null) target.searchParams.set('state', state)
  target.searchParams.set('iss', issuer)
  res.writeHead(303, { location: target.toString(), 'cache-control': 'no-store' })
  res.end()
  return true
}

/**
 * RFC 6749 §5.2 invalid_scope on the token endpoint: unknown scopes, or scopes the client may not
 * ask for; the refusal's description, or undefined to go on. A client credentials request without
 * a scope gets every scope the client is registered for (written into `params`).
 */
export async function checkScopes(
  db: Db,
  params: Record<string, string | string[] | undefined>,
  clientId: string | undefined,
): Promise<string | undefined> {
  const grantType = params.grant_type
  if (grantType !== 'client_credentials' && grantType !== 'refresh_token') return undefined
  const scope = params.scope
  if (Array.isArray(scope)) return undefined // the provider refuses duplicated parameters
  if (scope !== undefined) {
    const { unknown } = parseScopes(scope)
    if (unknown.length > 0) {
      return `Unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; this server knows ${ALL_SCOPES.join(', ')}.`
    }
  }
  if (grantType !== 'client_credentials' || clientId === undefined) return undefined
  const client = await findClient(db, clientId)
  if (client === undefined) return undefined // the provider answers invalid_client
  const allowed = parseScopes(client.scopes).scopes
  if (scope === undefined) {
    // No scope asked: every scope the client is registered for (RFC 6749 §3.3 allows a default).
    params.scope = allowed.join(' ')
    return undefined
  }
  const notAllowed = parseScopes(scope).scopes.filter((s) => !allowed.includes(s))
  if (notAllowed.length > 0) {
    return `This client is not registered for ${notAllowed.join(', ')}; it may ask for ${allowed.join(', ')}.`
  }
  return undefined
}
