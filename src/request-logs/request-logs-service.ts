import type { PageRequest } from '../db/keyset-page.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import type { RequestLogFilter, RequestLogRow } from './request-log.ts'
import { findRequestLog, listRequestLogs, purgeRequestLogsBefore } from './request-logs-repository.ts'

export { purgeRequestLogsBefore }

/** One entry of the account's request log; another account's id answers 404 as an unknown one. */
export async function getRequestLogOfAccount(db: Db, accountId: string, id: string): Promise<RequestLogRow> {
  const row = await findRequestLog(db, accountId, id)
  if (row === undefined) {
    throw new ApiError(
      'request_log_not_found',
      `No request log entry ${JSON.stringify(id)} in your account (entries are kept for a limited time).`,
    )
  }
  return row
}

/** A page of the account's request log, newest first. */
export async function listRequestLogsOfAccount(
  db: Db,
  accountId: string,
  filter: RequestLogFilter,
  page: PageRequest<string>,
): Promise<{ rows: RequestLogRow[]; hasMore: boolean }> {
  const found = await listRequestLogs(db, accountId, filter, page)
  if (found === undefined) {
    const cursor = page.startingAfter ?? page.endingBefore
    throw new ApiError(
      'invalid_cursor',
      `The cursor ${JSON.stringify(cursor)} is not a request log entry of your account.`,
      { param: page.startingAfter !== undefined ? 'starting_after' : 'ending_before' },
    )
  }
  return found
}
