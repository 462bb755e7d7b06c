import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { assertOneCursor } from '../../http/replies.ts'
import { type RequestLogFilter, toRequestLogV1 } from '../../request-logs/request-log.ts'
import {
  ListRequestLogsQuery,
  RequestLogIdParams,
  RequestLogListSchema,
  RequestLogV1Schema,
} from '../../request-logs/request-log-schemas.ts'
import { getRequestLogOfAccount, listRequestLogsOfAccount } from '../../request-logs/request-logs-service.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'

const tags = ['v1-request-log']
const security = API_KEY_SECURITY

/** `GET /v1/request_log` and `GET /v1/request_log/{id}`: the account's request logs, newest first. */
export async function v1RequestLogRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps

  app.get(
    '/request_log',
    {
      config: { scope: 'read:request_logs' },
      schema: {
        operationId: 'listRequestLogs',
        summary: 'List request logs, newest first',
        description:
          'The authenticated requests of your account (v1, v2, and the OAuth token endpoint for your clients) of the last `REQUEST_LOG_RETENTION_DAYS` days (7 by default). Filters combine: `status_class`, `method`, `path` (a prefix), `credential_id`, `request_id`. An entry appears within about a second of its answer.',
        tags,
        security,
        querystring: ListRequestLogsQuery,
        response: { 200: RequestLogListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query
      assertOneCursor(q.starting_after, q.ending_before)
      const filter: RequestLogFilter = {
        ...(q.status_class === undefined ? {} : { statusClass: q.status_class }),
        ...(q.method === undefined ? {} : { method: q.method.toUpperCase() }),
        ...(q.path === undefined ? {} : { path: q.path }),
        ...(q.credential_id === undefined ? {} : { credentialId: q.credential_id }),
        ...(q.request_id === undefined ? {} : { requestId: q.request_id }),
      }
      const page = await listRequestLogsOfAccount(db, request.principal!.accountId, filter, {
        limit: q.limit,
        ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
        ...(q.ending_before === undefined ? {} : { endingBefore: q.ending_before }),
      })
      return {
        object: 'list' as const,
        data: page.rows.map(toRequestLogV1),
        has_more: page.hasMore,
        url: '/v1/request_log',
      }
    },
  )

  app.get(
    '/request_log/:id',
    {
      config: { scope: 'read:request_logs' },
      schema: {
        operationId: 'getRequestLog',
        summary: 'Get a request log entry',
        tags,
        security,
        params: RequestLogIdParams,
        response: { 200: RequestLogV1Schema, ...problemResponses(404) },
      },
    },
    async (request) =>
      toRequestLogV1(await getRequestLogOfAccount(db, request.principal!.accountId, request.params.id)),
  )
}
