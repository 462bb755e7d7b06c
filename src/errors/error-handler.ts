import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { databaseFailure } from '../db/database-errors.ts'
import { ApiError } from './api-error.ts'
import { multipartError } from './multipart-errors.ts'
import { quoteHeaderValue } from './redact.ts'
import { ERRORS, problemType } from './registry.ts'
import { type AjvError, validationProblem } from './validation-errors.ts'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** Seconds a client should wait before retrying after a 503: enough for a reconnect or failover. */
export const RETRY_AFTER_SECONDS = 2

/** Renders every failure as an RFC 9457 problem document; nothing else reaches the client. */
export function registerErrorHandling(
  app: FastifyInstance,
  options: { allowedMethods?: (url: string) => string[] } = {},
): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = error instanceof ApiError ? error : translate(error as FastifyError, request)
    // /readyz reports it until a write succeeds again (src/health/storage-full.ts).
    if (apiError.code === 'storage_full') request.server.deps.storageFull.raise()
    // Only the unexpected is an error with its stack; a 5xx the service meant to answer (the
    // database away or full, the service stopping) is a state to watch: a warning, no stack.
    if (apiError.code === 'internal_error') request.log.error({ err: error }, 'request failed')
    else if (apiError.status >= 500)
      request.log.warn({ code: apiError.code, reason: error.message }, 'request not served')
    else if (!(error instanceof ApiError))
      request.log.info({ err: { message: error.message } }, 'client error')
    return sendProblem(request, reply, apiError)
  })
  app.setNotFoundHandler((request, reply) => {
    const path = shortened(request.url.split('?')[0] ?? '')
    const allowed = options.allowedMethods?.(request.url) ?? []
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return sendProblem(
        request,
        reply,
        new ApiError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}; it takes ${allowed.join(', ')}.`,
          { headers: { allow: allowed.join(', ') } },
        ),
      )
    }
    return sendProblem(
      request,
      reply,
      new ApiError('not_found', `No route matches ${request.method} ${path}; see /docs.`),
    )
  })
}

/** A path quoted in a detail: the first 200 characters. */
function shortened(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path
}

export function problemBody(request: FastifyRequest, error: ApiError): Record<string, unknown> {
  return problemDocument(error, request.id)
}

/** The RFC 9457 document for `error`, also where no Fastify request exists (see client-errors.ts). */
export function problemDocument(error: ApiError, requestId: string): Record<string, unknown> {
  const entry = ERRORS[error.code]
  return {
    type: problemType(error.code),
    title: entry.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.options.param === undefined ? {} : { param: error.options.param }),
    ...(error.options.errors === undefined ? {} : { errors: error.options.errors }),
    ...error.options.extensions,
    request_id: requestId,
  }
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.options.headers !== undefined) reply.headers(error.options.headers)
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .serializer(JSON.stringify)
    .send(problemBody(request, error))
}

/**
 * The problem as the payload of an answer already being sent (an `onSend` hook replacing it):
 * sets the status and headers, and answers the body.
 */
export function problemPayload(request: FastifyRequest, reply: FastifyReply, error: ApiError): string {
  if (error.options.headers !== undefined) reply.headers(error.options.headers)
  reply.code(error.status).type(PROBLEM_CONTENT_TYPE)
  return JSON.stringify(problemBody(request, error))
}

/** Maps framework errors (validation, body parsing, limits) onto the registry. */
function translate(error: FastifyError, request: FastifyRequest): ApiError {
  const validation = (error as FastifyError & { validation?: AjvError[] }).validation
  if (validation !== undefined) {
    const context = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body'
    return validationProblem(validation, context, request.headers['content-type'])
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'body_too_large',
        `The request body is larger than the limit of ${request.routeOptions.bodyLimit ?? 0} bytes.`,
      )
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'unsupported_media_type',
        `Content-Type ${quoteHeaderValue(request.headers['content-type'] ?? '')} is not accepted here; send application/json or application/x-www-form-urlencoded.`,
      )
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(
        'malformed_body',
        'The body is empty but Content-Type says application/json; send a JSON object.',
      )
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'Content-Length does not match the body that was sent.')
  }
  const failure = databaseFailure(error)
  if (failure === 'unavailable') {
    return new ApiError(
      'database_unavailable',
      `The database did not answer in time or is busy; the request was not completed. Retry in ${RETRY_AFTER_SECONDS} s.`,
      { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
    )
  }
  if (failure === 'storage_full') {
    return new ApiError(
      'storage_full',
      'The database has no room left for this write; nothing was changed. Reads still work; writes will once space is freed.',
    )
  }
  const multipart = multipartError(error, request)
  if (multipart !== undefined) return multipart
  if (isConstraintRace(error)) {
    return new ApiError(
      'concurrent_change',
      'Another request changed related data at the same moment (for example, deleted the owner); nothing was changed. Retry the request.',
    )
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError('malformed_body', `The body is not valid JSON: ${error.message}`)
  }
  const status = error.statusCode ?? 500
  if (status === 413) return new ApiError('body_too_large', 'The request body is too large.')
  if (status === 415) return new ApiError('unsupported_media_type', error.message)
  if (status >= 400 && status < 500) return new ApiError('invalid_request', error.message)
  return new ApiError(
    'internal_error',
    `Something went wrong on our side (request ${request.id}); nothing was changed.`,
  )
}

/**
 * Foreign-key and uniqueness violations can only come from a race the services' own checks lost
 * (a pet created for an owner being deleted, say): the transaction rolled back, so retrying is safe.
 */
function isConstraintRace(error: { code?: string }): boolean {
  return (
    error.code === '23503' || // PostgreSQL foreign_key_violation
    error.code === '23505' || // PostgreSQL unique_violation
    error.code === '40001' || // PostgreSQL serialization_failure
    error.code === '40P01' || // PostgreSQL deadlock_detected
    error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    error.code === 'SQLITE_CONSTRAINT_UNIQUE'
  )
}
