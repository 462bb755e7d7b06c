import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { RETRY_AFTER_SECONDS, sendProblem } from '../errors/error-handler.ts'

/** Where a stopping instance is: `started` turns readiness off, `closing` once the listener closes. */
export class ShutdownState {
  started = false
  closing = false
}

/**
 * While the service stops, every answer carries `Connection: close`, so keep-alive clients open
 * their next connection elsewhere instead of finding this one closed under them. Once the
 * listener has closed, a request still arriving on an open connection (pipelined behind one in
 * flight, say) is answered with a 503 problem that says to retry.
 */
export function registerShutdownHooks(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const shutdown = app.deps.shutdown
    if (!shutdown.started) return
    // On the raw response, so that answers written outside Fastify (the OAuth provider's) carry it too.
    reply.raw.setHeader('connection', 'close')
    if (shutdown.closing) {
      return sendProblem(
        request,
        reply,
        new ApiError(
          'service_unavailable',
          `The service is shutting down; retry in ${RETRY_AFTER_SECONDS} s.`,
          {
            headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
          },
        ),
      )
    }
  })
}

/**
 * The stop sequence (README, Operations): readiness off at once; requests still served for
 * `drainMs` so load balancers notice and move traffic; then the listener closes, requests in
 * flight finish, and the onClose hooks run (the database closes last).
 */
export async function shutDown(app: FastifyInstance, drainMs: number): Promise<void> {
  app.deps.shutdown.started = true
  if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs))
  app.deps.shutdown.closing = true
  await app.close()
}
