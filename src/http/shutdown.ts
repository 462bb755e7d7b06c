import type { Server } from 'node:http'
import { Server as NetServer } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { RETRY_AFTER_SECONDS, sendProblem } from '../errors/error-handler.ts'
import { Connections, untilQuiet } from './connections.ts'

/** A connection with nothing to do for this long is ended while the service stops. */
const IDLE_MS = 1000

/** Where a stopping instance is: `started` turns readiness off, `closing` as the listener closes. */
export class ShutdownState {
  started = false
  closing = false
  /** Resolves once the listener has closed. */
  readonly listenerClosed: Promise<void>
  readonly markListenerClosed: () => void
  readonly connections: Connections
  /**
   * Stops new connections from reaching this process: closes its listener once no connection
   * has come for a moment; a worker of `serve --workers N` asks its primary instead.
   */
  closeListener: () => Promise<void>

  constructor(server: Server) {
    let resolve = () => {}
    this.listenerClosed = new Promise<void>((r) => {
      resolve = r
    })
    this.markListenerClosed = resolve
    const connections = new Connections(server)
    this.connections = connections
    this.closeListener = async () => {
      if (!server.listening) return
      await untilQuiet(() => connections.lastOpenedAt)
      // The listening socket alone: http.Server's close() would also destroy every connection
      // with no request in progress, including one whose request is on its way.
      NetServer.prototype.close.call(server)
    }
  }
}

/**
 * While the service stops, every answer carries `Connection: close`, so keep-alive clients open
 * their next connection elsewhere instead of finding this one closed under them. A request that
 * arrives while the listener closes waits for it to close, then is answered with a 503 problem
 * that says to retry: its client, waiting, opens no new connection that the closing listener
 * would reset.
 */
export function registerShutdownHooks(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const shutdown = app.deps.shutdown
    if (!shutdown.started) return
    // On the raw response, so that answers written outside Fastify (the OAuth provider's) carry it too.
    reply.raw.setHeader('connection', 'close')
    if (shutdown.closing) {
      await shutdown.listenerClosed
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
 * The stop sequence (README, Operations), which resets no request a client has sent:
 * 1. readiness off at once; for `drainMs` requests are still served, each answer closing its
 *    connection, so that load balancers notice and move traffic; kept-alive connections left
 *    unused for IDLE_MS are ended;
 * 2. then new requests wait, so their clients stop opening connections, and the listener closes
 *    once none has come for a moment (`closeListener`); the waiting requests are answered 503,
 *    and the event streams end;
 * 3. connections with nothing to do are ended once idle for IDLE_MS (a request on one meanwhile
 *    is answered 503); once the requests in flight have finished, the onClose hooks run (the
 *    database closes last).
 */
export async function shutDown(app: FastifyInstance, drainMs: number): Promise<void> {
  const { shutdown } = app.deps
  const { connections } = shutdown
  shutdown.started = true
  const draining = setInterval(() => connections.endIdleFor(IDLE_MS), IDLE_MS / 4)
  if (drainMs > 0) await sleep(drainMs)
  clearInterval(draining)
  shutdown.closing = true
  await shutdown.closeListener()
  shutdown.markListenerClosed()
  while (connections.endIdleFor(IDLE_MS) + connections.activeRequests > 0) await sleep(IDLE_MS / 4)
  await app.close()
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
