import type { ServerResponse } from 'node:http'
import type { Db } from '../../db/schema.ts'
import { findClient, providerSecret } from '../../oauth/clients-service.ts'
import { constantTimeEqual } from '../../oauth/constant-time.ts'
import type { OAuthServer } from '../../oauth/oauth-server.ts'
import { type AccessTokenClaims, InvalidTokenError } from '../../oauth/token-verifier.ts'
import { type ClientCredentials, sendJson } from './raw-io.ts'

/**
 * Revocation (RFC 7009) and introspection (RFC 7662) of our JWT access tokens, which the provider
 * does not store and so cannot revoke or inspect itself.
 */
export async function handleJwt(
  server: OAuthServer,
  db: Db,
  action: 'revoke' | 'introspect',
  token: string,
  credentials: ClientCredentials,
  res: ServerResponse,
  /** Answers a failed client authentication (counted: failed-clients.ts). */
  refuseClient: (description: string) => Promise<void>,
): Promise<void> {
  const client = credentials.clientId === undefined ? undefined : await findClient(db, credentials.clientId)
  // A public client has no secret to show: it names itself, and may only revoke (RFC 7009 §2.1).
  const authenticated =
    client?.client_type === 'public'
      ? credentials.secret === undefined && action === 'revoke'
      : client !== undefined &&
        credentials.secret !== undefined &&
        constantTimeEqual(providerSecret(credentials.secret), client.secret_hash)
  if (client === undefined || !authenticated) {
    await refuseClient('client authentication failed')
    return
  }
  let claims: AccessTokenClaims | undefined
  try {
    claims = await server.verifier.decode(token, { ignoreExpiry: action === 'revoke' })
  } catch (error) {
    if (!(error instanceof InvalidTokenError)) throw error
  }
  // A client may only revoke or inspect its own tokens; others' look unknown (RFC 7009 §2.1).
  const own = claims !== undefined && claims.client_id === client.client_id
  if (action === 'revoke') {
    if (own && claims !== undefined) {
      await server.revocations.revoke(`jti:${claims.jti}`, new Date(claims.exp * 1000 + 60_000))
    }
    res.writeHead(200, { 'cache-control': 'no-store' })
    res.end()
    return
  }
  if (!own || claims === undefined || server.verifier.isRevoked(claims)) {
    sendJson(res, 200, { active: false })
    return
  }
  sendJson(res, 200, {
    active: true,
    client_id: claims.client_id,
    scope: claims.scope,
    sub: claims.sub,
    account_id: claims.account_id,
    mode: claims.mode ?? 'live',
    exp: claims.exp,
    iat: claims.iat,
    iss: claims.iss,
    aud: claims.aud,
    jti: claims.jti,
    token_type: 'Bearer',
  })
}
