import type { FastifyInstance, FastifyRequest } from 'fastify'

/** Methods whose requests carry no body the service reads (RFC 9110 gives theirs no meaning). */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS'])

/**
 * True for an empty body on a method that takes none: no body, not malformed JSON. Generated
 * clients (the Petstore's Perl and Java ones) send `Content-Type: application/json` on every
 * request, a DELETE without a body included.
 */
export function isEmptyBodyOfBodilessMethod(request: FastifyRequest, text: string): boolean {
  return BODILESS.has(request.method) && text.trim() === ''
}

/**
 * Fastify's own JSON parser (its limits and its answers to malformed or poisoned JSON), except
 * that an empty body on a bodiless method is no body. Scopes with a parser of their own (v2) make
 * the same exception.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (isEmptyBodyOfBodilessMethod(request, String(body))) {
      done(null, undefined)
      return
    }
    json(request, String(body), done)
  })
}
