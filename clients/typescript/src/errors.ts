/**
 * Every failure the client reports is a PetServiceError; its subclass says what kind of failure
 * it is, so callers can `catch (e) { if (e instanceof NotFoundError) … }`. The fields mirror the
 * service's RFC 9457 problem documents (https://www.rfc-editor.org/rfc/rfc9457).
 */

/** One field at fault, when a problem names several. */
export interface FieldError {
  param: string
  message: string
}

export interface PetServiceErrorInit {
  message?: string
  status?: number | undefined
  code?: string | undefined
  param?: string | undefined
  requestId?: string | undefined
  detail?: string | undefined
  title?: string | undefined
  type?: string | undefined
  errors?: FieldError[] | undefined
  headers?: Headers | undefined
  /** The parsed response body (a problem document, an OAuth error, or text). */
  raw?: unknown
  cause?: unknown
}

export class PetServiceError extends Error {
  /** HTTP status; undefined when no response arrived (connection errors, timeouts). */
  readonly status: number | undefined
  /** Stable machine-readable code, e.g. `pet_not_found` or the OAuth `invalid_client`. */
  readonly code: string | undefined
  /** The parameter at fault, when there is one. */
  readonly param: string | undefined
  /** The response's Request-Id: quote it when asking for help. */
  readonly requestId: string | undefined
  /** What went wrong in this request, and how to fix it. */
  readonly detail: string | undefined
  readonly title: string | undefined
  /** URI of the page that describes this kind of problem. */
  readonly type: string | undefined
  readonly errors: FieldError[] | undefined
  readonly headers: Headers | undefined
  readonly raw: unknown

  constructor(init: PetServiceErrorInit) {
    super(
      init.message ?? init.detail ?? init.title ?? `Request failed with status ${init.status ?? 'unknown'}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    )
    this.name = new.target.name
    this.status = init.status
    this.code = init.code
    this.param = init.param
    this.requestId = init.requestId
    this.detail = init.detail
    this.title = init.title
    this.type = init.type
    this.errors = init.errors
    this.headers = init.headers
    this.raw = init.raw
  }
}

/** 400, 405, 413, 415, 422: the request itself is wrong; fix it before sending it again. */
export class InvalidRequestError extends PetServiceError {}
/** 401: no credential, or an unknown, revoked or expired one (also OAuth `invalid_client`). */
export class AuthenticationError extends PetServiceError {}
/** 403: the credential is valid but lacks the scope the operation needs. */
export class PermissionError extends PetServiceError {}
/** 404: no such object in your account (or no such route). */
export class NotFoundError extends PetServiceError {}
/** 409 and 412: conflicts with the current state (status transitions, stale If-Match, …). */
export class ConflictError extends PetServiceError {}
/** 429: slow down; `retryAfter` says for how many seconds. */
export class RateLimitError extends PetServiceError {
  /** Seconds from the Retry-After header, when the service sent one. */
  get retryAfter(): number | undefined {
    const value = this.headers?.get('retry-after')
    if (value === null || value === undefined) return undefined
    const seconds = Number(value)
    return Number.isFinite(seconds) ? seconds : undefined
  }
}
/** 5xx: the service failed; the request changed nothing and may be retried. */
export class ServerError extends PetServiceError {}
/** No response: DNS, refused connection, reset, or an aborted request. */
export class ConnectionError extends PetServiceError {}
/** No response within the timeout. */
export class TimeoutError extends ConnectionError {}

/** OAuth token-endpoint errors that mean "your client credentials are wrong" (RFC 6749 §5.2). */
const OAUTH_AUTH_ERRORS = new Set(['invalid_client', 'invalid_grant', 'unauthorized_client', 'invalid_token'])

/** The subclass for an HTTP error response. */
export function errorClassFor(status: number, code?: string): typeof PetServiceError {
  if (code !== undefined && OAUTH_AUTH_ERRORS.has(code)) return AuthenticationError
  if (code === 'insufficient_scope') return PermissionError
  if (status === 401) return AuthenticationError
  if (status === 403) return PermissionError
  if (status === 404) return NotFoundError
  if (status === 409 || status === 412) return ConflictError
  if (status === 429) return RateLimitError
  if (status >= 500) return ServerError
  return InvalidRequestError
}

/** Builds the error for a response, from a problem document, an OAuth error body, or plain text. */
export function errorFromResponse(response: Response, body: unknown): PetServiceError {
  const requestId = response.headers.get('request-id') ?? undefined
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
  // Problem documents carry `code`; OAuth errors (RFC 6749 §5.2, RFC 6750 §3) carry `error`.
  const code = str(problem.code) ?? str(problem.error) ?? bearerChallengeError(response)
  const detail =
    str(problem.detail) ??
    str(problem.error_description) ??
    str(problem.message) ??
    (typeof body === 'string' && body.trim() !== '' ? body.trim().slice(0, 500) : undefined)
  const title = str(problem.title) ?? (response.statusText || undefined)
  const ErrorClass = errorClassFor(response.status, code)
  return new ErrorClass({
    message: `${detail ?? title ?? `HTTP ${response.status}`}${requestId === undefined ? '' : ` (request ${requestId})`}`,
    status: response.status,
    code,
    param: str(problem.param),
    requestId: str(problem.request_id) ?? requestId,
    detail,
    title,
    type: str(problem.type),
    errors: Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : undefined,
    headers: response.headers,
    raw: body,
  })
}

/** `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3) when the body says nothing. */
function bearerChallengeError(response: Response): string | undefined {
  const challenge = response.headers.get('www-authenticate')
  return challenge?.match(/error="([^"]+)"/)?.[1]
}
