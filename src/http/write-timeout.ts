import type { FastifyInstance } from 'fastify'

/**
 * Cuts off an answer whose client takes none of it for HTTP_WRITE_TIMEOUT_SECONDS: the
 * connection is destroyed, and with it what the process held for the answer (see
 * answer-budget.ts). It is the socket's idle timeout, armed as the answer starts: every write
 * the kernel completes restarts it, and Node does not fire it while a large write it holds is
 * still shrinking (net.Socket's `_onTimeout`), so a client that reads, however slowly, keeps
 * its answer. Once the answer is sent, Node puts the keep-alive timeout in its place. Event
 * streams are left alone: they idle between heartbeats by design, and drop a client that falls
 * behind by their own bound.
 */
export function registerWriteTimeout(app: FastifyInstance, timeoutMs: number): void {
  // A callback hook, not an async one: no promise per answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    const socket = request.raw.socket
    // No socket to watch: gone already, or an injected request (tests).
    if (socket === null || socket.destroyed || typeof socket.setTimeout !== 'function') {
      done(null, payload)
      return
    }
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')) {
      done(null, payload)
      return
    }
    const onTimeout = () => {
      request.log.info(
        { write_timeout_seconds: timeoutMs / 1000 },
        'answer cut off: the client took none of it in time',
      )
      socket.destroy()
    }
    socket.setTimeout(timeoutMs)
    socket.once('timeout', onTimeout)
    reply.raw.once('close', () => socket.removeListener('timeout', onTimeout))
    done(null, payload)
  })
}
