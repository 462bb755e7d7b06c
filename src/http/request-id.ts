import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { randomIdText } from '../lib/ids.ts'

const INCOMING = /^[\w.:-]{1,128}$/

/** Keeps a caller's (or proxy's) well-formed request id, otherwise mints one. */
export function generateRequestId(request: IncomingMessage): string {
  const incoming = request.headers['request-id'] ?? request.headers['x-request-id']
  if (typeof incoming === 'string' && INCOMING.test(incoming)) return incoming
  return newRequestId()
}

export function newRequestId(): string {
  return `req_${randomIdText(20)}`
}

export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id)
    done()
  })
}
