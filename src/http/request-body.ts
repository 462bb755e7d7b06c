import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../errors/api-error.ts'

/**
 * What a route sees when Fastify did not parse a body:
 * - no body at all on POST or PATCH: an empty form, so "name is required" is the answer;
 * - a body without a Content-Type: 415, not ignored (RFC 9110 §8.3: it may be taken as
 *   application/octet-stream, which no operation takes);
 * - multipart/form-data, whose parser leaves the body to the route: 415 on every route but the
 *   upload, instead of running the operation on an empty body.
 */
export function registerBodyPresence(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body !== undefined) {
      done()
      return
    }
    if (hasContent(request) && request.headers['content-type'] === undefined) {
      done(
        new ApiError(
          'unsupported_media_type',
          'The request has a body but no Content-Type; send application/json or application/x-www-form-urlencoded.',
        ),
      )
      return
    }
    if (isMultipart(request) && !takesMultipart(request)) {
      done(
        new ApiError(
          'unsupported_media_type',
          'multipart/form-data is not accepted here; send application/json or application/x-www-form-urlencoded.',
        ),
      )
      return
    }
    if (request.method === 'POST' || request.method === 'PATCH') request.body = {}
    done()
  })
}

function isMultipart(request: FastifyRequest): boolean {
  return (request as FastifyRequest & { isMultipart?: () => boolean }).isMultipart?.() === true
}

function takesMultipart(request: FastifyRequest): boolean {
  const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes ?? []
  return consumes.some((type) => type.startsWith('multipart/'))
}

function hasContent(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
