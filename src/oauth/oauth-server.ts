import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type Provider from 'oidc-provider'
import { ALL_SCOPES, parseScopes } from '../access/scopes.ts'
import type { Config } from '../config/config.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { findNul } from '../errors/nul-characters.ts'
import type { RateLimiter } from '../http/rate-limiter.ts'
import { forwardTrustedView } from '../http/trust-proxy.ts'
import { findClient } from './clients-repository.ts'
import { providerSecret } from './clients-service.ts'
import { constantTimeEqual } from './constant-time.ts'
import { registerInteractionRoutes } from './interaction-routes.ts'
import { authorizationServerMetadata } from './metadata.ts'
import { loadOrCreateKeys } from './oauth-keys.ts'
import { purgeExpiredOAuthRows } from './oauth-store.ts'
import { createProvider, OAUTH_MOUNT, resourceOf } from './provider.ts'
import { type ProviderEndpointName, providerEndpoint } from './provider-endpoints.ts'
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
  /** Authorization requests per client address (each stores an Interaction row); none when unset. */
  authorizeLimiter?: RateLimiter
}

interface MountOptions {
  db: Db
  authorizeLimiter: RateLimiter | undefined
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
 *  - limits authorization requests per client address;
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
    trustProxy: config.trustProxy !== false,
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
  // Stopped as closing begins: onClose hooks run last-registered first, so the database (closed
  // by server.ts, which registers after this) would go before the poller stopped. Requests still
  // in flight were authenticated already, and no new ones are taken.
  app.addHook('preClose', async () => {
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
  await app.register(async (scope) =>
    mountProvider(scope, server, { db, authorizeLimiter: options.authorizeLimiter }),
  )

  // RFC 8414 §3: the metadata lives at /.well-known/oauth-authorization-server for an issuer
  // without a path.
  const metadata = authorizationServerMetadata(issuer)
  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(metadata),
  )

  await registerInteractionRoutes(app, { provider, db })
  return server
}

/**
 * oidc-provider reads the request body itself, so its requests must leave Fastify before the
 * body is parsed: an onRequest hook of routes of their own hands them over. (Middleware at the
 * root, @fastify/middie, did the same but cost every request of the service a URL decode.)
 * Only the endpoints we offer, spelled exactly (provider-endpoints.ts), reach the provider.
 */
async function mountProvider(
  scope: FastifyInstance,
  server: OAuthServer,
  options: MountOptions,
): Promise<void> {
  const callback = server.provider.callback()
  scope.addHook('onRequest', async (request, reply) => {
    const req: IncomingMessage & { originalUrl?: string } = request.raw
    const original = req.url ?? ''
    const target = targetUnderMount(original)
    const endpoint = target === undefined ? undefined : providerEndpoint(target.path)
    // Not an endpoint we offer: the routes below answer our 404.
    if (target === undefined || endpoint === undefined) return
    if (!endpoint.methods.includes(request.method)) {
      throw new ApiError(
        'method_not_allowed',
        `${OAUTH_MOUNT}${target.path} takes ${endpoint.methods.join(' or ')}, not ${request.method}.`,
        { headers: { allow: endpoint.methods.join(', ') } },
      )
    }
    if (endpoint.name === 'authorization' && options.authorizeLimiter !== undefined) {
      await limitAuthorizationRequests(options.authorizeLimiter, request)
    }
    // Mounted the Express way: the provider takes what precedes req.url in req.originalUrl as
    // its mount path, for the URLs it builds.
    req.originalUrl = original
    req.url = `${target.path}${target.query}`
    if (server.provider.proxy) forwardTrustedView(request)
    let handled: boolean
    try {
      handled = await frontOfProvider(server, options.db, endpoint.name, req, reply.raw)
    } catch (error) {
      req.url = original
      throw error
    }
    reply.hijack()
    if (!handled) callback(req, reply.raw)
  })
  // Reached by every path under /oauth that is neither an endpoint above nor a sign-in or
  // consent page (interaction-routes.ts): our 404 problem.
  const notFound = (_request: FastifyRequest, reply: FastifyReply) => reply.callNotFound()
  scope.all(OAUTH_MOUNT, { schema: { hide: true } }, notFound)
  scope.all(`${OAUTH_MOUNT}/*`, { schema: { hide: true } }, notFound)
}

/**
 * The request target's path relative to the mount, exactly as the client spelled it (no
 * decoding, no case folding; one trailing slash dropped, as the service's router does), and its
 * query. Undefined when the path does not begin with the mount as spelled (`/OAUTH/…`,
 * `/%6fauth/…`).
 */
function targetUnderMount(raw: string): { path: string; query: string } | undefined {
  let target = raw
  if (!target.startsWith('/')) {
    // Absolute form (RFC 9112 §3.2.2): its path, as the URL parser normalises it.
    if (!URL.canParse(target)) return undefined
    const url = new URL(target)
    target = `${url.pathname}${url.search}`
  }
  const end = target.search(/[?#]/)
  const path = end === -1 ? target : target.slice(0, end)
  const query = end === -1 ? '' : target.slice(end)
  if (path !== OAUTH_MOUNT && !path.startsWith(`${OAUTH_MOUNT}/`)) return undefined
  let rest = path.slice(OAUTH_MOUNT.length)
  if (rest.length > 1 && rest.endsWith('/')) rest = rest.slice(0, -1)
  return { path: rest === '' ? '/' : rest, query }
}

/**
 * Each authorization request stores an Interaction row (for an hour) before anyone signs in:
 * limit them per client address so anonymous requests cannot grow the database at will.
 */
async function limitAuthorizationRequests(limiter: RateLimiter, request: FastifyRequest): Promise<void> {
  const decision = await limiter.take(request.ip)
  if (decision.allowed) return
  throw new ApiError(
    'rate_limited',
    `Too many authorization requests from this address (${limiter.burst} at once, then ${Math.round(limiter.ratePerSecond * 60)} a minute); retry in ${decision.retryAfterSeconds} s.`,
    { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
  )
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
}

function clientCredentials(req: IncomingMessage, params: Record<string, unknown>): ClientCredentials {
  const header = req.headers.authorization
  if (header !== undefined && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) return { clientId: undefined, secret: undefined }
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
    }
  }
  const clientId = typeof params.client_id === 'string' ? params.client_id : undefined
  const secret = typeof params.client_secret === 'string' ? params.client_secret : undefined
  return { clientId, secret }
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

/**
 * Runs before the provider on GET /oauth/authorize and POST /oauth/token, /revoke and
 * /introspect. Returns true when it answered the request itself; otherwise hands the body it
 * read on to the provider. Client secrets are checked by the provider itself
 * (compareHashedSecrets in provider.ts), and here only for our JWT revocation and introspection.
 */
async function frontOfProvider(
  server: OAuthServer,
  db: Db,
  endpoint: ProviderEndpointName,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  if (endpoint === 'authorization' && req.method === 'GET') {
    const query = Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''))
    if (refuseNul(res, query)) return true
    return refuseUnknownScopes(server, db, req, res)
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
  if (refuseNul(res, { ...params, Authorization: [credentials.clientId ?? '', credentials.secret ?? ''] }))
    return true

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
    )
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
