import type { FastifyReply, FastifyRequest } from 'fastify'
import { authorizationHeader } from '../../access/authorization-header.ts'
import { API_KEY_PREFIX } from '../../access/credential-kinds.ts'
import { countFailedAttempt } from '../../access/failed-attempts.ts'
import { assertScope } from '../../access/scope-check.ts'
import { ApiError } from '../../errors/api-error.ts'
import { redactSecret } from '../../errors/redact.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import type { KeyAuthenticator } from '../../keys/keys-service.ts'

export const BASIC_CHALLENGE = 'Basic realm="pet-service", charset="UTF-8"'

/** The API key from `Authorization: Basic base64(KEY:)` or `Authorization: Bearer KEY`. */
export function apiKeyFromHeader(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined
  const [scheme = '', value = ''] = header.trim().split(/\s+/, 2)
  if (scheme.toLowerCase() === 'bearer') return value
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    // The key is the user name; the password is meant to be empty and is ignored.
    return colon === -1 ? decoded : decoded.slice(0, colon)
  }
  throw new ApiError('api_key_invalid', unsupportedScheme(scheme, value), {
    headers: { 'www-authenticate': BASIC_CHALLENGE },
  })
}

/** Auth schemes are short tokens (RFC 9110 §11.1); anything else may be a credential. */
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,19}$/

/** Names a scheme we do not take, but never quotes a credential sent in its place. */
function unsupportedScheme(scheme: string, value: string): string {
  const use = 'use Basic (the key as user name, empty password) or Bearer'
  if (scheme.startsWith(API_KEY_PREFIX) || value === '' || !SCHEME_NAME.test(scheme)) {
    return `The Authorization header has no scheme before the credential (${redactSecret(scheme)}): send \`Authorization: Bearer pet_sk_...\`, or ${use}.`
  }
  return `Authorization scheme ${JSON.stringify(scheme)} is not supported; ${use}.`
}

function challenge(error: ApiError): ApiError {
  error.options.headers = { ...error.options.headers, 'www-authenticate': BASIC_CHALLENGE }
  return error
}

export interface ApiKeyAuthDeps {
  keys: KeyAuthenticator
  /** Failed attempts per client address; refuses guessing before any lookup. */
  failedAttempts: RateLimiter
}

/** onRequest hook: authenticates the API key and checks the route's scope. */
export function apiKeyAuthentication(deps: ApiKeyAuthDeps) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    let key: string | undefined
    try {
      key = apiKeyFromHeader(authorizationHeader(request.raw))
    } catch (error) {
      throw await countFailure(deps, request, error)
    }
    if (key === undefined || key === '') {
      throw challenge(
        new ApiError(
          'api_key_missing',
          'No API key was sent. Send it as the HTTP Basic user name with an empty password (curl -u pet_sk_...: URL) or as the header Authorization: Bearer pet_sk_....',
        ),
      )
    }
    try {
      request.principal = await deps.keys.authenticate(key)
    } catch (error) {
      throw await countFailure(deps, request, error)
    }
    assertScope(request.principal, request.routeOptions.config.scope)
  }
}

async function countFailure(deps: ApiKeyAuthDeps, request: FastifyRequest, error: unknown): Promise<unknown> {
  const counted = await countFailedAttempt(deps.failedAttempts, request.ip, error)
  return counted === error && error instanceof ApiError && error.status === 401 ? challenge(error) : counted
}
