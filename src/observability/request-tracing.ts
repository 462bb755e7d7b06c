import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * A server span for every request (https://opentelemetry.io/docs/specs/semconv/http/http-spans/):
 * named by method and route pattern, continuing the caller's trace (`traceparent`), with the
 * status and, once the request is authenticated, the account it acts for. The span is made the
 * active context for the request's hooks and handler, so the database spans
 * (src/db/traced-dialect.ts) become its children.
 *
 * Registered only when tracing is on (see src/observability/tracing.ts).
 */
export function traceRequests(app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<FastifyRequest, Span>()

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.split('?', 1)[0] ?? request.url,
          'url.scheme': request.protocol,
          'client.address': request.ip,
          ...(route === undefined ? {} : { 'http.route': route }),
        },
      },
      parent,
    )
    spans.set(request, span)
    context.with(trace.setSpan(parent, span), done)
  })

  // The body is read from socket events, outside the request's async context: enter it again
  // for what runs after parsing (validation, handlers and their hooks).
  app.addHook('preValidation', (request, _reply, done) => {
    const span = spans.get(request)
    if (span === undefined) done()
    else context.with(trace.setSpan(context.active(), span), done)
  })

  const finish = (request: FastifyRequest, reply: FastifyReply | undefined): void => {
    const span = spans.get(request)
    if (span === undefined) return
    spans.delete(request)
    if (request.principal !== null) span.setAttribute('account.id', request.principal.accountId)
    if (reply === undefined) {
      span.setAttribute('error.type', 'aborted')
    } else {
      span.setAttribute('http.response.status_code', reply.statusCode)
      if (reply.statusCode >= 500) {
        span.setAttribute('error.type', String(reply.statusCode))
        span.setStatus({ code: SpanStatusCode.ERROR })
      }
    }
    span.end()
  }
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply)
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, undefined)
    done()
  })
}
