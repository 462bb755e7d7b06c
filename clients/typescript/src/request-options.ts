/** Options of one call, as the last argument of every method: `client.pets.create(params, { timeout })`. */
export interface RequestOptions {
  /**
   * Idempotency-Key of a POST. One is generated for every POST that has none, and kept across
   * that call's retries, so a retried create never creates twice. Pass your own to make a
   * create safe to repeat across process restarts too.
   */
  idempotencyKey?: string
  /** Milliseconds to wait for each attempt's response before giving up on it. */
  timeout?: number
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries?: number
  /** ETag of the version a change is based on (`If-Match`); a stale one answers 412. */
  ifMatch?: string
  /** Cancels the call (all its attempts). */
  signal?: AbortSignal
  /** Extra headers for this call. */
  headers?: Record<string, string>
}

/** What every result carries besides the API's JSON (non-enumerable: JSON.stringify skips it). */
export interface ResponseInfo {
  /** The Request-Id header: quote it when asking for help. */
  requestId: string | undefined
  status: number
  headers: Headers
  /** ETag of the object returned, for `ifMatch` on the next change. */
  etag: string | undefined
}

export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo }

/** Attaches `lastResponse` without making it part of the object's JSON. */
export function withResponse<T extends object>(value: T, info: ResponseInfo): WithResponse<T> {
  Object.defineProperty(value, 'lastResponse', { value: info, enumerable: false, configurable: true })
  return value as WithResponse<T>
}
