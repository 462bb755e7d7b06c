import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { isDatabaseReady } from '../db/database.ts'
import { ApiError } from '../errors/api-error.ts'
import { RETRY_AFTER_SECONDS } from '../errors/error-handler.ts'

const Status = Type.Object({ status: Type.String() })

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness: the process answers', tags: ['service'], response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the database answers and the service is not shutting down',
        tags: ['service'],
        response: { 200: Status },
      },
    },
    async () => {
      const { shutdown, storageFull, db, config } = app.deps
      const notReady = (detail: string) =>
        new ApiError('service_unavailable', detail, {
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
        })
      if (shutdown.started) throw notReady('The service is shutting down.')
      if (storageFull.raised) throw notReady('The database is full: writes fail until space is freed.')
      // A bound of its own, shorter than the database's timeouts: a load balancer's check must not hang.
      if (!(await isDatabaseReady(db, config.readyTimeoutSeconds * 1000))) {
        throw notReady(`The database does not answer within ${config.readyTimeoutSeconds} s.`)
      }
      return { status: 'ready' }
    },
  )
}
