import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring'
import type { Db } from '../../db/schema.ts'
import { findNul } from '../../errors/nul-characters.ts'
import { findClient } from '../../oauth/clients-service.ts'
import type { OAuthServer } from '../../oauth/oauth-server.ts'
import type { ProviderEndpointName } from '../../oauth/provider-endpoints.ts'
import type { FailedClients } from './failed-clients.ts'
import { handleJwt } from './jwt-tokens.ts'
import { BODY_LIMIT, clientCredentials, oauthError, readBody, replayBody } from './raw-io.ts'
import { checkScopes, refuseUnknownScopes } from './scope-checks.ts'

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

/**
 * Runs before the provider on GET /oauth/authorize and POST /oauth/token, /revoke and
 * /introspect. Returns true when it answered the request itself; otherwise hands the body it
 * read on to the provider. Client secrets are checked by the provider itself
 * (compareHashedSecrets in src/oauth/provider.ts), and here only for our JWT revocation and
 * introspection (jwt-tokens.ts).
 */
export async function frontOfProvider(
  server: OAuthServer,
  db: Db,
  endpoint: ProviderEndpointName,
  req: IncomingMessage,
  res: ServerResponse,
  failedClients: FailedClients,
  /** Told the token request's parameters and client id once read (for its request log entry). */
  onTokenRequest?: (request: { clientId: string | undefined; params: Record<string, unknown> }) => void,
): Promise<boolean> {
  if (endpoint === 'authorization' && req.method === 'GET') {
    const query = Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''))
    if (refuseNul(res, query)) return true
    return refuseUnknownScopes(server.issuer, db, req, res)
  }
  if (endpoint !== 'token' && endpoint !== 'revocation' && endpoint !== 'introspection') return false
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) return false
  const text = await readBody(req)
  if (text === undefined) {
    oauthError(res, 413, 'invalid_request', `The request body is larger than ${BODY_LIMIT} bytes.`)
    return true
  }
  const params = parseQuery(text) as Record<string, string | string[] | undefined>
  const credentials = clientCredentials(req, params)
  if (endpoint === 'token') onTokenRequest?.({ clientId: credentials.clientId, params })
  if (refuseNul(res, { ...params, Authorization: [credentials.clientId ?? '', credentials.secret ?? ''] }))
    return true

  if (endpoint === 'introspection' && (await isPublicClient(db, credentials.clientId))) {
    // RFC 7662 §2.1: introspection needs an authenticated client, which a public one cannot be.
    await failedClients.refuse(req, res, 'public clients cannot use token introspection')
    return true
  }
  if (endpoint === 'token') {
    const refused = await checkScopes(db, params, credentials.clientId)
    if (refused !== undefined) {
      oauthError(res, 400, 'invalid_scope', refused)
      return true
    }
  } else if (typeof params.token === 'string' && JWT_SHAPE.test(params.token)) {
    await handleJwt(
      server,
      db,
      endpoint === 'revocation' ? 'revoke' : 'introspect',
      params.token,
      credentials,
      res,
      (description) => failedClients.refuse(req, res, description),
    )
    return true
  }
  replayBody(req, stringifyQuery(params as Record<string, string | string[]>))
  return false
}

async function isPublicClient(db: Db, clientId: string | undefined): Promise<boolean> {
  if (clientId === undefined) return false
  return (await findClient(db, clientId))?.client_type === 'public'
}

/**
 * PostgreSQL cannot store or compare text holding U+0000, and no client id, secret, code or token
 * holds one: answered `invalid_request` before any lookup, the same on both dialects.
 */
function refuseNul(res: ServerResponse, params: Record<string, unknown>): boolean {
  const param = findNul(params)
  if (param === undefined) return false
  oauthError(
    res,
    400,
    'invalid_request',
    `The parameter ${param.split('.')[0]} contains the NUL character (U+0000).`,
  )
  return true
}
