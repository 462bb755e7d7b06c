import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { isDatabaseReady } from '../db/database.ts'
import { ApiError } from '../errors/api-error.ts'

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
      if (app.deps.shuttingDown.value)
        throw new ApiError('service_unavailable', 'The service is shutting down.')
      if (!(await isDatabaseReady(app.deps.db))) {
        throw new ApiError('service_unavailable', 'The database does not answer.')
      }
      return { status: 'ready' }
    },
  )
}
