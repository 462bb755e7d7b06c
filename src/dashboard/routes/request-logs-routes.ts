import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import {
  type RequestLogFilter,
  STATUS_CLASSES,
  type StatusClass,
  toRequestLogV1,
} from '../../request-logs/request-log.ts'
import { getRequestLogOfAccount, listRequestLogsOfAccount } from '../../request-logs/request-logs-service.ts'
import { csrfToken, noticeFrom, query, sendPage, sessionOf } from '../context.ts'
import { LOG_METHODS, type LogFilters, requestLogPage, requestLogsPage } from '../views/request-logs-views.ts'

const PAGE_SIZE = 20

/** The account's request logs, newest first, with the API's filters; and one entry with its bodies. */
export async function requestLogsRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  app.get('/logs', async (request, reply) => {
    const session = sessionOf(request)
    const statusClass = query(request, 'status_class')
    const method = query(request, 'method').toUpperCase()
    const filters: LogFilters = {
      status_class: (STATUS_CLASSES as readonly string[]).includes(statusClass) ? statusClass : '',
      method: (LOG_METHODS as readonly string[]).includes(method) ? method : '',
      path: query(request, 'path').slice(0, 200),
      credential_id: query(request, 'credential_id').slice(0, 64),
      request_id: query(request, 'request_id').slice(0, 64),
    }
    const filter: RequestLogFilter = {
      ...(filters.status_class === '' ? {} : { statusClass: filters.status_class as StatusClass }),
      ...(filters.method === '' ? {} : { method: filters.method }),
      ...(filters.path === '' ? {} : { path: filters.path }),
      ...(filters.credential_id === '' ? {} : { credentialId: filters.credential_id }),
      ...(filters.request_id === '' ? {} : { requestId: filters.request_id }),
    }
    const startingAfter = query(request, 'starting_after').slice(0, 64) || undefined
    const endingBefore = query(request, 'ending_before').slice(0, 64) || undefined
    const cursor =
      endingBefore !== undefined ? { endingBefore } : startingAfter !== undefined ? { startingAfter } : {}
    // A stale cursor (an entry purged since) shows the first page rather than an error.
    const page = await listRequestLogsOfAccount(db, session.accountId, filter, {
      limit: PAGE_SIZE,
      ...cursor,
    }).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'invalid_cursor') {
        return listRequestLogsOfAccount(db, session.accountId, filter, { limit: PAGE_SIZE })
      }
      throw error
    })
    return sendPage(
      reply,
      requestLogsPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        entries: page.rows.map(toRequestLogV1),
        filters,
        hasNewer: endingBefore !== undefined ? page.hasMore : startingAfter !== undefined,
        hasOlder: endingBefore !== undefined ? true : page.hasMore,
      }),
    )
  })

  app.get('/logs/:id', async (request, reply) => {
    const session = sessionOf(request)
    const { id } = request.params as { id: string }
    const entry = await getRequestLogOfAccount(db, session.accountId, id.slice(0, 64))
    return sendPage(
      reply,
      requestLogPage({ csrf: csrfToken(reply), email: session.email, entry: toRequestLogV1(entry) }),
    )
  })
}
