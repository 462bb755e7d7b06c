import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { newTimeOrderedId } from '../lib/ids.ts'

const INCOMING = /^[\w.:-]{1,128}$/

/** Keeps a caller's (or proxy's) well-formed request id, otherwise mints one. */
export function generateRequestId(request: IncomingMessage): string {
  const incoming = request.headers['request-id'] ?? request.headers['x-request-id']
  if (typeof incoming === 'string' && INCOMING.test(incoming)) return incoming
  return newRequestId()
}

/**
 * Time-ordered, as request logs index it per account (src/request-logs/): a random id would put
 * each stored entry on a random page of that index.
 */
export function newRequestId(): string {
  return newTimeOrderedId('req')
}

export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id)
    done()
  })
}
