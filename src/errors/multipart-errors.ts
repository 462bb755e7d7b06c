import type { FastifyRequest } from 'fastify'
import { ApiError } from './api-error.ts'

/** @fastify/multipart's own errors for a body that breaks its rules or its limits. */
const MULTIPART_CODES: Record<string, (message: string) => ApiError> = {
  FST_PARTS_LIMIT: () =>
    new ApiError('body_too_large', 'The multipart body has more parts than this operation takes.'),
  FST_FILES_LIMIT: () =>
    new ApiError('body_too_large', 'The multipart body has more files than this operation takes.'),
  FST_FIELDS_LIMIT: () =>
    new ApiError('body_too_large', 'The multipart body has more fields than this operation takes.'),
  FST_PROTO_VIOLATION: () =>
    new ApiError('malformed_body', 'A multipart field may not be named __proto__ or constructor.'),
  FST_MP_PREMATURE_CLOSE: () =>
    new ApiError('malformed_body', 'The multipart body ended before its closing boundary.'),
}

/**
 * What busboy (@fastify/busboy, under @fastify/multipart) throws for a body that is not
 * multipart/form-data as declared: plain Errors without a code, known by their text.
 */
const BUSBOY_MESSAGES = [
  /^Multipart: Boundary not found$/,
  /^Boundary required$/,
  /^Unexpected end of multipart data$/,
  /terminated early due to unexpected end of multipart data$/,
  /^The needle cannot (be an empty|have a length bigger)/,
  /^Malformed/,
]

/** The problem for a malformed or over-limit multipart body, or undefined for any other error. */
export function multipartError(
  error: { code?: string; message: string; statusCode?: number },
  request: FastifyRequest,
): ApiError | undefined {
  const byCode = error.code === undefined ? undefined : MULTIPART_CODES[error.code]
  if (byCode !== undefined) return byCode(error.message)
  const type = request.headers['content-type'] ?? ''
  if (!/^multipart\//i.test(type) || error.code !== undefined) return undefined
  if (!BUSBOY_MESSAGES.some((pattern) => pattern.test(error.message))) return undefined
  return new ApiError(
    'malformed_body',
    `The multipart/form-data body could not be read (${error.message}); send a complete body with a boundary of at most 70 characters, as in RFC 7578.`,
  )
}
