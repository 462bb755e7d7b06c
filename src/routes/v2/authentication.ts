import type { FastifyReply, FastifyRequest } from 'fastify'
import { authorizationHeader } from '../../access/authorization-header.ts'
import { wrongCredentialForV2 } from '../../access/credential-kinds.ts'
import { countFailedAttempt } from '../../access/failed-attempts.ts'
import { assertScope } from '../../access/scope-check.ts'
import type { Scope } from '../../access/scopes.ts'
import { ApiError } from '../../errors/api-error.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import type { KeyAuthenticator } from '../../keys/keys-service.ts'
import { InvalidTokenError, type TokenVerifier } from '../../oauth/token-verifier.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation also takes an API key in the Petstore's `api_key` header. */
    apiKeyHeader?: boolean
    /** No credentials needed (uploaded images). */
    public?: boolean
    /**
     * The Petstore document declares no security for the operation (its /user and /store/order ones), so a
     * generated client sends the token only when it is set as a default header: the 401 says so.
     */
    undeclaredSecurity?: boolean
  }
}

/** Route config of the operations the Petstore document leaves without security (see above). */
export const UNDECLARED_SECURITY = { undeclaredSecurity: true } as const

/** An operation's OpenAPI `security` entry: the Petstore's OAuth scheme, with the scope it needs. */
export const oauthScope = (scope: Scope) => ({ petstore_auth: [scope] })

/** The Petstore's `api_key` header, which a few of its operations take beside the token. */
export const API_KEY_HEADER = { api_key: [] }

/** RFC 6750 §3: a request with no credentials gets the bare challenge, without an error code. */
export const BEARER_CHALLENGE = 'Bearer'

const UNDECLARED_SECURITY_HINT =
  ' The Petstore document declares no security for this operation, so a client generated from it does not send the token by itself: set Authorization: Bearer <token> as a default header of the client (see "Sending the token" in docs/petstore-differences.md).'

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`
}

function invalidToken(description: string): ApiError {
  return new ApiError('token_invalid', description, {
    headers: {
      'www-authenticate': `Bearer error="invalid_token", error_description=${quoted(description)}`,
    },
  })
}

export interface BearerAuthDeps {
  verifier: TokenVerifier
  keys: KeyAuthenticator
  /** Failed attempts per client address: guessing is refused (429) before any more checks. */
  failedAttempts?: RateLimiter
}

function countFailure(deps: BearerAuthDeps, request: FastifyRequest, error: unknown): Promise<unknown> {
  return countFailedAttempt(deps.failedAttempts, request.ip, error)
}

/**
 * onRequest hook of the v2 API: an OAuth 2.0 bearer token (RFC 6750), or, where the route says
 * so, an API key in the `api_key` header. Produces the same Principal as v1's API keys, so the
 * domain code is shared; then checks the route's scope.
 */
export function bearerAuthentication(deps: BearerAuthDeps) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config
    if (config.public) return
    const header = bearerHeader(request)
    const apiKey = request.headers.api_key
    if ((header === undefined || header.trim() === '') && config.apiKeyHeader && typeof apiKey === 'string') {
      try {
        request.principal = await deps.keys.authenticate(apiKey)
      } catch (error) {
        if (error instanceof ApiError) error.options.headers = { 'www-authenticate': BEARER_CHALLENGE }
        throw await countFailure(deps, request, error)
      }
      assertBearerScope(request)
      return
    }
    if (header === undefined || header.trim() === '') {
      throw new ApiError(
        'token_missing',
        `No access token was sent. Send Authorization: Bearer <token> with a token from POST /oauth/token${config.apiKeyHeader ? ', or your API key in the api_key header' : ''}.${config.undeclaredSecurity ? UNDECLARED_SECURITY_HINT : ''}`,
        { headers: { 'www-authenticate': BEARER_CHALLENGE } },
      )
    }
    const [scheme = '', token = '', ...rest] = header.trim().split(/\s+/)
    if (scheme.toLowerCase() !== 'bearer' || token === '' || rest.length > 0) {
      throw new ApiError(
        'token_missing',
        'The v2 API takes OAuth 2.0 bearer tokens: send Authorization: Bearer <token> (API keys in Basic authentication work on v1).',
        { headers: { 'www-authenticate': BEARER_CHALLENGE } },
      )
    }
    const wrongKind = wrongCredentialForV2(token)
    if (wrongKind !== undefined) throw await countFailure(deps, request, invalidToken(wrongKind))
    try {
      const { claims, scopes } = await deps.verifier.verify(token)
      request.principal = {
        accountId: claims.account_id,
        scopes,
        via: 'oauth',
        credentialId: claims.client_id,
      }
    } catch (error) {
      if (error instanceof InvalidTokenError)
        throw await countFailure(deps, request, invalidToken(error.message))
      throw error
    }
    assertBearerScope(request)
  }
}

/** The Authorization header; two of them are RFC 6750's `invalid_request`, with its challenge. */
function bearerHeader(request: FastifyRequest): string | undefined {
  try {
    return authorizationHeader(request.raw)
  } catch (error) {
    if (error instanceof ApiError) {
      error.options.headers = {
        'www-authenticate': `Bearer error="invalid_request", error_description=${quoted(error.detail)}`,
      }
    }
    throw error
  }
}

/** RFC 6750 §3.1: 403 insufficient_scope with a Bearer challenge naming the scope. */
function assertBearerScope(request: FastifyRequest): void {
  assertScope(request.principal, request.routeOptions.config.scope, (scope) => ({
    'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}", error_description="The ${scope} scope is required."`,
  }))
}
