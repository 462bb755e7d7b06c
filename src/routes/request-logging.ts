import type { FastifyInstance, FastifyRequest } from 'fastify'
import { apiVersionOf, requestLogEntry } from '../request-logs/request-log-recording.ts'
import type { RequestLogWriter } from '../request-logs/request-log-writer.ts'

/** The answers of failures, kept from onSend to onResponse. */
const failedAnswers = new WeakMap<FastifyRequest, string>()

/**
 * Records every request that authenticated (its principal is set: v1 and v2, whatever the
 * answer, a 403 or a 429 included) for its account. The entry is built once the answer is sent
 * and handed to the writer, which stores it later, in a batch.
 */
export function registerRequestLogging(app: FastifyInstance, writer: RequestLogWriter): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.principal !== null && reply.statusCode >= 400 && typeof payload === 'string') {
      failedAnswers.set(request, payload)
    }
    done(null, payload)
  })
  app.addHook('onResponse', (request, reply, done) => {
    const principal = request.principal
    if (principal !== null) {
      const answer = failedAnswers.get(request)
      writer.record(
        requestLogEntry({
          accountId: principal.accountId,
          credentialKind: principal.via,
          credentialId: principal.credentialId,
          method: request.method,
          url: request.url,
          status: reply.statusCode,
          durationMs: reply.elapsedTime,
          requestId: request.id,
          clientAddress: request.ip,
          apiVersion: apiVersionOf(request.url),
          headers: request.headers,
          body: request.body,
          answer,
        }),
      )
    }
    done()
  })
}
