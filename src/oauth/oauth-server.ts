import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type Provider from 'oidc-provider'
import { ALL_SCOPES, parseScopes } from '../auth/scopes.ts'
import type { Config } from '../config/config.ts'
import type { Db } from '../db/schema.ts'
import { findNul } from '../http/nul-characters.ts'
import { findClient } from './clients-repository.ts'
import { providerSecret } from './clients-service.ts'
import { constantTimeEqual } from './constant-time.ts'
import { registerInteractionRoutes } from './interaction-routes.ts'
import { loadOrCreateKeys } from './oauth-keys.ts'
import { purgeExpiredOAuthRows } from './oauth-store.ts'
import { createProvider, OAUTH_MOUNT, resourceOf } from './provider.ts'
import { RevocationList } from './revocations.ts'
import { type AccessTokenClaims, InvalidTokenError, TokenVerifier } from './token-verifier.ts'
import { TTL } from './ttl.ts'

export interface OAuthServer {
  issuer: string
  provider: Provider
  verifier: TokenVerifier
  revocations: RevocationList
  /** Records a client as deleted: its JWT access tokens are refused from now on. */
  clientDeleted(clientId: string): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The authorisation server: its provider, token verifier and revocation list. */
    oauth: OAuthServer
  }
}

export interface OAuthOptions {
  config: Config
  db: Db
  /** How often revocations made on other instances are read (ms); at most 5000. */
  revocationPollMs?: number
}

/** The issuer identifier: PUBLIC_URL, else http://localhost:PORT (RFC 8414 §2: no path, no query). */
export function issuerOf(config: Config): string {
  return config.publicUrl === undefined ? `http://localhost:${config.port}` : new URL(config.publicUrl).origin
}

const BODY_LIMIT = 56 * 1024

/**
 * Mounts the authorisation server: oidc-provider's Koa callback under /oauth (see
 * mountProvider), our metadata route at the RFC 8414 location, the sign-in and consent pages,
 * and a thin layer in front of the provider that
 *  - hashes the client secret a client presents, since only its hash is stored;
 *  - answers `invalid_scope` for unknown or unallowed scopes (the provider drops them silently);
 *  - revokes and introspects JWT access tokens, which the provider does not store.
 */
export async function registerOAuth(app: FastifyInstance, options: OAuthOptions): Promise<OAuthServer> {
  const { config, db } = options
  const issuer = issuerOf(config)
  const keys = await loadOrCreateKeys(db)
  const revocations = new RevocationList(db, {
    pollMs: options.revocationPollMs ?? 2000,
    onError: (error) => app.log.warn({ err: error }, 'could not read OAuth revocations'),
  })
  await revocations.start()
  const revokeUntilTokensExpire = (subject: string) =>
    revocations.revoke(subject, new Date(Date.now() + TTL.accessToken * 1000 + 60_000))
  const provider = createProvider({
    issuer,
    db,
    keys,
    trustProxy: config.trustProxy,
    onGrantRevoked: (grantId) => revokeUntilTokensExpire(`grant:${grantId}`),
  })
  provider.on('server_error', (_ctx, error) => app.log.error({ err: error }, 'oauth server error'))
  const verifier = new TokenVerifier(keys.verification, issuer, resourceOf(issuer), revocations)
  const purge = setInterval(
    () => {
      Promise.all([purgeExpiredOAuthRows(db), revocations.purge()]).catch((error: unknown) =>
        app.log.warn({ err: error }, 'could not purge expired OAuth rows'),
      )
    },
    15 * 60 * 1000,
  )
  purge.unref()
  app.addHook('onClose', async () => {
    clearInterval(purge)
    await revocations.stop()
  })

  const server: OAuthServer = {
    issuer,
    provider,
    verifier,
    revocations,
    clientDeleted: (clientId) => revokeUntilTokensExpire(`client:${clientId}`),
  }

  app.decorate('oauth', server)
  await app.register(async (scope) => mountProvider(scope, server, db))

  // RFC 8414 §3: the metadata lives at /.well-known/oauth-authorization-server for an issuer
  // without a path; the provider serves it under its mount, so forward it from there.
  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, async (_request, reply) => {
    const res = await app.inject({
      method: 'GET',
      url: `${OAUTH_MOUNT}/.well-known/oauth-authorization-server`,
    })
    const metadata = res.json() as Record<string, unknown>
    for (const [key, value] of Object.entries(metadata)) {
      // Endpoints as the issuer names them, whatever Host this request came with.
      if (typeof value === 'string' && (key.endsWith('_endpoint') || key === 'jwks_uri')) {
        const url = new URL(value)
        metadata[key] = `${issuer}${url.pathname}`
      }
    }
    metadata.scopes_supported = ALL_SCOPES
    metadata.response_types_supported = ['code']
    metadata.code_challenge_methods_supported = ['S256']
    metadata.grant_types_supported = ['authorization_code', 'client_credentials', 'refresh_token']
    delete metadata.claims_supported
    delete metadata.claims_parameter_supported
    delete metadata.subject_types_supported
    delete metadata.id_token_signing_alg_values_supported
    delete metadata.userinfo_endpoint
    delete metadata.end_session_endpoint
    return reply.header('cache-control', 'public, max-age=300').send(metadata)
  })

  await registerInteractionRoutes(app, { provider, db })
  return server
}

/**
 * oidc-provider reads the request body itself, so its requests must leave Fastify before the
 * body is parsed: an onRequest hook of routes of their own hands them over. (Middleware at the
 * root, @fastify/middie, did the same but cost every request of the service a URL decode.)
 */
async function mountProvider(scope: FastifyInstance, server: OAuthServer, db: Db): Promise<void> {
  const callback = server.provider.callback()
  scope.addHook('onRequest', async (request, reply) => {
    const req: IncomingMessage & { originalUrl?: string } = request.raw
    const original = req.url ?? ''
    const url = pathUnderMount(request)
    // Our own pages (sign-in, consent) are Fastify routes; a path under them none matches is a 404.
    if (url.startsWith('/interaction/')) return
    // Mounted the Express way: the provider takes what precedes req.url in req.originalUrl as
    // its mount path, for the URLs it builds.
    req.originalUrl = original
    req.url = url
    let handled: boolean
    try {
      handled = await frontOfProvider(server, db, req, reply.raw)
    } catch (error) {
      req.url = original
      throw error
    }
    reply.hijack()
    if (!handled) callback(req, reply.raw)
  })
  // Reached only by paths under /oauth/interaction/ that none of those routes matches.
  const notFound = (_request: FastifyRequest, reply: FastifyReply) => reply.callNotFound()
  scope.all(OAUTH_MOUNT, { schema: { hide: true } }, notFound)
  scope.all(`${OAUTH_MOUNT}/*`, { schema: { hide: true } }, notFound)
}

/**
 * The request target relative to the mount, query kept, as middleware mounted at /oauth would
 * see it (a trailing slash dropped, as the router ignores it).
 */
function pathUnderMount(request: FastifyRequest): string {
  const target = request.raw.url ?? ''
  const end = target.search(/[?#]/)
  const path = end === -1 ? target : target.slice(0, end)
  const query = end === -1 ? '' : target.slice(end)
  let rest: string
  if (path === OAUTH_MOUNT || path.startsWith(`${OAUTH_MOUNT}/`)) rest = path.slice(OAUTH_MOUNT.length)
  else {
    // An absolute-form target or a percent-encoded mount: what the router matched, decoded.
    const params = request.params as { '*'?: string }
    rest = params['*'] === undefined ? '' : `/${params['*']}`
  }
  if (rest.length > 1 && rest.endsWith('/')) rest = rest.slice(0, -1)
  return `${rest.startsWith('/') ? rest : `/${rest}`}${query}`
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  })
  res.end(JSON.stringify(body))
}

function oauthError(res: ServerResponse, status: number, error: string, description: string) {
  sendJson(
    res,
    status,
    { error, error_description: description },
    status === 401 ? { 'www-authenticate': 'Basic realm="pet-service"' } : {},
  )
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > BODY_LIMIT) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Hands the (rewritten) body to the provider as if it were still unread: its body reader
 * (selective_body.js) iterates the request when `readable`, and checks Content-Length.
 */
function replayBody(req: IncomingMessage, text: string): void {
  const body = Buffer.from(text)
  req.headers['content-length'] = String(body.length)
  Object.defineProperty(req, 'readable', { value: true, configurable: true })
  Object.defineProperty(req, 'iterator', {
    configurable: true,
    value: async function* () {
      yield body
    },
  })
}

interface ClientCredentials {
  clientId: string | undefined
  secret: string | undefined
  /** Where the secret came from, to rewrite it there. */
  via: 'basic' | 'body' | 'none'
}

function clientCredentials(req: IncomingMessage, params: Record<string, unknown>): ClientCredentials {
  const header = req.headers.authorization
  if (header !== undefined && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) return { clientId: undefined, secret: undefined, via: 'basic' }
    // RFC 6749 §2.3.1: both halves are form-urlencoded before base64.
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replaceAll('+', ' '))
      } catch {
        return s
      }
    }
    return {
      clientId: decode(decoded.slice(0, colon)),
      secret: decode(decoded.slice(colon + 1)),
      via: 'basic',
    }
  }
  const clientId = typeof params.client_id === 'string' ? params.client_id : undefined
  const secret = typeof params.client_secret === 'string' ? params.client_secret : undefined
  return { clientId, secret, via: secret === undefined ? 'none' : 'body' }
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

/**
 * Runs before the provider on POST /oauth/token, /revoke and /introspect. Returns true when it
 * answered the request itself; otherwise leaves the parsed body on `req.body` for the provider.
 */
async function frontOfProvider(
  server: OAuthServer,
  db: Db,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const path = (req.url ?? '').split('?')[0]
  if (req.method === 'GET' && path === '/authorize') {
    const query = Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''))
    if (refuseNul(res, query)) return true
    return refuseUnknownScopes(server, db, req, res)
  }
  if (req.method !== 'POST' || !['/token', '/revoke', '/introspect'].includes(path ?? '')) return false
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) return false
  const text = await readBody(req)
  if (text === undefined) {
    oauthError(res, 413, 'invalid_request', `The request body is larger than ${BODY_LIMIT} bytes.`)
    return true
  }
  const params = parseQuery(text) as Record<string, string | string[] | undefined>
  const credentials = clientCredentials(req, params)
  if (refuseNul(res, { ...params, Authorization: [credentials.clientId ?? '', credentials.secret ?? ''] }))
    return true

  // Only the secret's hash is stored: hash what the client presents, wherever it put it.
  if (credentials.secret !== undefined && credentials.clientId !== undefined) {
    const hashed = providerSecret(credentials.secret)
    if (credentials.via === 'basic') {
      const encode = (s: string) => encodeURIComponent(s)
      req.headers.authorization = `Basic ${Buffer.from(`${encode(credentials.clientId)}:${encode(hashed)}`).toString('base64')}`
    } else params.client_secret = hashed
  }

  if (path === '/token') {
    const refused = await checkScopes(db, params, credentials.clientId)
    if (refused !== undefined) {
      oauthError(res, 400, 'invalid_scope', refused)
      return true
    }
  } else if (typeof params.token === 'string' && JWT_SHAPE.test(params.token)) {
    await handleJwt(server, db, path === '/revoke' ? 'revoke' : 'introspect', params.token, credentials, res)
    return true
  }
  replayBody(req, stringifyQuery(params as Record<string, string | string[]>))
  return false
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

/**
 * RFC 6749 §4.1.2.1: an authorization request naming a scope this server does not know is
 * answered `invalid_scope` at the client's redirect URI (once client and URI are known good;
 * otherwise the provider's own checks answer). Known scopes the client is not registered for
 * are refused by the provider itself.
 */
async function refuseUnknownScopes(
  server: OAuthServer,
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
  target.searchParams.set('iss', server.issuer)
  res.writeHead(303, { location: target.toString(), 'cache-control': 'no-store' })
  res.end()
  return true
}

/** RFC 6749 §5.2 invalid_scope: unknown scopes, or scopes the client may not ask for. */
async function checkScopes(
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

/** Revocation (RFC 7009) and introspection (RFC 7662) of our JWT access tokens. */
async function handleJwt(
  server: OAuthServer,
  db: Db,
  action: 'revoke' | 'introspect',
  token: string,
  credentials: ClientCredentials,
  res: ServerResponse,
): Promise<void> {
  const client = credentials.clientId === undefined ? undefined : await findClient(db, credentials.clientId)
  if (
    client === undefined ||
    credentials.secret === undefined ||
    !constantTimeEqual(providerSecret(credentials.secret), client.secret_hash)
  ) {
    oauthError(res, 401, 'invalid_client', 'client authentication failed')
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
    exp: claims.exp,
    iat: claims.iat,
    iss: claims.iss,
    aud: claims.aud,
    jti: claims.jti,
    token_type: 'Bearer',
  })
}
