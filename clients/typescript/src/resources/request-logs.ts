import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import type { RequestLog, RequestLogListParams } from '../types.ts'
import { idPath, Resource } from './resource.ts'

/**
 * `client.requestLogs`: the API requests of your account and their answers, for 7 days (v1, API
 * key with `read:request_logs`). Failures keep their headers and bodies, secrets redacted.
 */
export class RequestLogs extends Resource {
  /** `GET /v1/request_log/{id}`. */
  get(id: string, options?: RequestOptions): Promise<WithResponse<RequestLog>> {
    return this.call<RequestLog>(
      { method: 'GET', path: idPath('/v1/request_log', id), credential: 'key' },
      options,
    )
  }

  /**
   * `GET /v1/request_log`, newest first: await it for one page, `for await` for every entry.
   * Filters: `status_class` (`4xx`…), `method`, `path` (a prefix), `credential_id`, `request_id`.
   */
  list(params: RequestLogListParams = {}, options?: RequestOptions): ListPromise<RequestLog, string> {
    return this.paginate<RequestLog, string>('/v1/request_log', params, options)
  }
}
