import type { FastifyInstance, FastifyReply } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { quoteHeaderValue } from '../errors/redact.ts'

/**
 * Where a page of another origin may call: the two APIs, the OAuth endpoints a browser app calls
 * with fetch (token, revocation, introspection, keys, metadata) and the OpenAPI document. Never
 * the dashboard or the OAuth sign-in and consent pages: those work with cookies and stay
 * same-origin, so no other site can read them whatever CORS_ORIGINS says.
 */
const CORS_PATHS = [
  /^\/v[12](\/|\?|$)/,
  /^\/oauth\/(token|revoke|introspect|jwks)\/?(\?|$)/,
  /^\/\.well-known\/oauth-authorization-server\/?(\?|$)/,
  /^\/openapi\.json(\?|$)/,
]

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE'
/** What the API reads from a request beyond the CORS-safelisted headers. */
const ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, If-Match, api_key, Last-Event-ID, Request-Id'
/**
 * What a script may read of an answer beyond the safelisted headers: the request id, the
 * concurrency and creation headers, the rate-limit fields, Petstore login's headers, the
 * deprecation notices and the authentication challenge.
 */
export const EXPOSE_HEADERS = [
  'Request-Id',
  'ETag',
  'Location',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'X-Rate-Limit',
  'X-Expires-After',
  'Deprecation',
  'Sunset',
  'Link',
  'WWW-Authenticate',
].join(', ')
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 h). */
const MAX_AGE_SECONDS = 7200

/**
 * CORS for the origins of CORS_ORIGINS. A request from one of them gets
 * `Access-Control-Allow-Origin` naming it (never `*`, never credentials: the API authenticates by
 * header, not cookie) and the exposed headers; its preflight is answered here, before
 * authentication and rate limits, with 204. A request from any other origin, or without one, is
 * left exactly as it was: no CORS headers, so the browser keeps the answer from the page, and an
 * `OPTIONS` that is not a preflight still gets the 405 with `Allow`. Register after the request
 * id, so a preflight's answer carries one too.
 *
 * With no CORS_ORIGINS at all, a preflight is answered with a problem that says to set it (the
 * developer's browser shows it), and the log says so, once: a 405 naming OPTIONS would send
 * whoever reads it the wrong way.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) {
    refusePreflights(app)
    return
  }
  const allowed = new Set(origins)
  app.addHook('onRequest', async (request, reply) => {
    const path = request.raw.url ?? ''
    if (!CORS_PATHS.some((pattern) => pattern.test(path))) return
    // The answer differs by Origin: caches must keep one copy per origin.
    reply.header('vary', 'Origin')
    const origin = request.headers.origin
    if (origin === undefined || !allowed.has(origin)) return
    reply.header('access-control-allow-origin', origin)
    const requestedMethod = request.headers['access-control-request-method']
    if (request.method !== 'OPTIONS' || requestedMethod === undefined) {
      reply.header('access-control-expose-headers', EXPOSE_HEADERS)
      return
    }
    return answerPreflight(reply)
  })
}

function refusePreflights(app: FastifyInstance): void {
  let logged = false
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin
    if (request.method !== 'OPTIONS' || origin === undefined) return
    if (request.headers['access-control-request-method'] === undefined) return
    if (!CORS_PATHS.some((pattern) => pattern.test(request.raw.url ?? ''))) return
    const quoted = quoteHeaderValue(origin)
    if (!logged) {
      logged = true
      request.log.warn(
        { origin: quoted },
        `A page of another origin (${quoted}) tried to call the service, and CORS_ORIGINS is empty, so browsers keep every answer from it: list that origin in CORS_ORIGINS to allow it (logged once)`,
      )
    }
    throw new ApiError(
      'cors_not_enabled',
      `Pages of other origins cannot call this service: its operator has not listed any in CORS_ORIGINS. To let ${quoted} call it, start the service with that origin in CORS_ORIGINS (CORS_ORIGINS=https://app.example.com, comma-separated).`,
    )
  })
}

function answerPreflight(reply: FastifyReply): FastifyReply {
  return reply
    .code(204)
    .header('access-control-allow-methods', ALLOW_METHODS)
    .header('access-control-allow-headers', ALLOW_HEADERS)
    .header('access-control-max-age', String(MAX_AGE_SECONDS))
    .send()
}

/**
 * The CORS headers decided above, for an answer written outside Fastify (the OAuth provider's,
 * on the raw response): the provider then leaves CORS to us for that request.
 */
export function copyCorsHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue
    if (name.startsWith('access-control-') || name === 'vary') reply.raw.setHeader(name, value)
  }
}
