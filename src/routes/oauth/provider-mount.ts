import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Db } from '../../db/schema.ts'
import { ApiError } from '../../errors/api-error.ts'
import { copyCorsHeaders } from '../../http/cors.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import { forwardTrustedView } from '../../http/trust-proxy.ts'
import { findClient } from '../../oauth/clients-service.ts'
import type { OAuthServer } from '../../oauth/oauth-server.ts'
import { OAUTH_MOUNT } from '../../oauth/provider.ts'
import { ProviderRequests } from '../../oauth/provider-context.ts'
import { providerEndpoint } from '../../oauth/provider-endpoints.ts'
import { requestLogEntry } from '../../request-logs/request-log-recording.ts'
import { FailedClients } from './failed-clients.ts'
import { frontOfProvider } from './token-guard.ts'

export interface MountOptions {
  db: Db
  authorizeLimiter: RateLimiter | undefined
  /** Failed authentications per client address, shared with the APIs (failed-clients.ts). */
  failedAttempts: RateLimiter | undefined
}

/**
 * oidc-provider reads the request body itself, so its requests must leave Fastify before the
 * body is parsed: an onRequest hook of routes of their own hands them over. (Middleware at the
 * root, @fastify/middie, did the same but cost every request of the service a URL decode.)
 * Only the endpoints we offer, spelled exactly (src/oauth/provider-endpoints.ts), reach the
 * provider; token-guard.ts runs in front of them.
 */
export async function mountProvider(
  scope: FastifyInstance,
  server: OAuthServer,
  options: MountOptions,
): Promise<void> {
  const failedClients = new FailedClients(options.failedAttempts)
  server.provider.use(failedClients.middleware)
  const callback = server.provider.callback()
  const providerRequests = new ProviderRequests()
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
    failedClients.remember(req, request.ip)
    // Our CORS answer (src/http/cors.ts) for an allowed origin; the provider's own CORS code
    // stands aside when it finds one, and refuses any other origin at the client endpoints.
    copyCorsHeaders(reply)
    let handled: boolean
    let tokenRequest: TokenRequest | undefined
    try {
      handled = await frontOfProvider(
        server,
        options.db,
        endpoint.name,
        req,
        reply.raw,
        failedClients,
        (seen) => {
          tokenRequest = seen
        },
      )
    } catch (error) {
      req.url = original
      throw error
    }
    reply.hijack()
    if (tokenRequest !== undefined) logTokenRequest(scope, request, reply.raw, original, tokenRequest)
    if (!handled) {
      providerRequests.enter()
      reply.raw.once('close', () => providerRequests.leave())
      callback(req, reply.raw)
    }
  })
  // Reached by every path under /oauth that is neither an endpoint above nor a sign-in or
  // consent page (interaction.ts): our 404 problem.
  const notFound = (_request: FastifyRequest, reply: FastifyReply) => reply.callNotFound()
  scope.all(OAUTH_MOUNT, { schema: { hide: true } }, notFound)
  scope.all(`${OAUTH_MOUNT}/*`, { schema: { hide: true } }, notFound)
}

interface TokenRequest {
  clientId: string | undefined
  params: Record<string, unknown>
}

/**
 * Records a token request of a known client in its account's request log, once answered. The
 * provider writes the answer to the raw response itself (the reply is hijacked, so Fastify's
 * hooks do not see it): its body is caught as it is ended, and the client is looked up after
 * the answer has gone.
 */
function logTokenRequest(
  scope: FastifyInstance,
  request: FastifyRequest,
  response: ServerResponse,
  url: string,
  token: TokenRequest,
): void {
  const { clientId } = token
  if (clientId === undefined || clientId === '' || !scope.deps.config.requestLogs) return
  let answer: string | undefined
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse
  response.end = ((...args: unknown[]) => {
    const [chunk] = args
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) answer = String(chunk)
    return end(...args)
  }) as ServerResponse['end']
  const started = performance.now()
  response.once('finish', () => {
    const durationMs = performance.now() - started
    findClient(scope.deps.db, clientId)
      .then((client) => {
        if (client === undefined) return
        scope.deps.requestLogs.record(
          requestLogEntry({
            accountId: client.account_id,
            credentialKind: 'oauth',
            credentialId: client.client_id,
            method: request.method,
            url,
            status: response.statusCode,
            durationMs,
            requestId: request.id,
            clientAddress: request.ip,
            apiVersion: 'oauth',
            headers: request.headers,
            body: token.params,
            answer: response.statusCode >= 400 ? answer : undefined,
          }),
        )
      })
      .catch((error: unknown) => scope.log.warn({ err: error }, 'could not log a token request'))
  })
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
