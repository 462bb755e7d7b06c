import type { FastifyReply } from 'fastify'
import { ApiError } from '../errors/api-error.ts'

/**
 * A signal that fires when the client goes away before its answer is sent, so that costly work
 * done for it (hashing passwords) stops. The response's `close` tells: the request's own fires
 * as soon as its body has been read (Node 20), so Fastify's `request.signal` has already fired
 * by the time a handler with a body runs. The reason is a 499 problem (an ApiError, so it is not
 * logged as a failure of ours), which no client receives: its connection is gone.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return
    controller.abort(
      new ApiError(
        'client_closed_request',
        'The client closed the connection before the answer was ready; the work for it stopped and nothing was changed.',
      ),
    )
  })
  return controller.signal
}
