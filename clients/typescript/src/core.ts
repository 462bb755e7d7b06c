import { ConnectionError, errorFromResponse, PetServiceError, TimeoutError } from './errors.ts'
import type { RequestOptions, ResponseInfo } from './request-options.ts'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number)[]

/**
 * Which credential a call sends. `key` prefers the API key (v1), `token` prefers the OAuth
 * token (v2); each falls back to the other when only one is configured. `basic` is a literal
 * `Authorization: Basic` value (the token endpoint's client authentication).
 */
export type Credential = 'key' | 'token' | { basic: string } | 'none'

export interface Call {
  method: HttpMethod
  path: string
  query?: Record<string, QueryValue> | undefined
  /** Sent as JSON. */
  json?: unknown
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string | undefined> | undefined
  credential: Credential
  /** False for a POST that must not carry an Idempotency-Key (the OAuth token endpoint). */
  idempotent?: boolean
}

export interface Result<T> {
  body: T
  info: ResponseInfo
}

export interface CoreConfig {
  baseUrl: string
  apiKey: string | undefined
  timeout: number
  maxRetries: number
  fetch: typeof fetch
  headers: Record<string, string>
  /** Returns a bearer token (configured or fetched); `refresh` forces a new one. */
  token: ((refresh: boolean) => Promise<string>) | undefined
  /** True when `token` fetches tokens itself, so a 401 may be cured by fetching a new one. */
  tokenRenewable: boolean
}

/** First retry waits about this long; each further one doubles it, up to MAX_DELAY_MS. */
const INITIAL_DELAY_MS = 250
const MAX_DELAY_MS = 8_000
/** A Retry-After longer than this is not waited for: the error is thrown instead. */
const MAX_RETRY_AFTER_S = 60

/** Sends requests: credentials, JSON, timeouts, retries with backoff, typed errors. */
export class Core {
  constructor(readonly config: CoreConfig) {}

  async send<T>(call: Call, options: RequestOptions = {}): Promise<Result<T>> {
    const maxRetries = Math.max(0, options.maxRetries ?? this.config.maxRetries)
    const timeout = options.timeout ?? this.config.timeout
    // One key per call, kept across its retries: the service replays the first response.
    const idempotencyKey =
      call.method !== 'POST' || call.idempotent === false
        ? undefined
        : (options.idempotencyKey ?? newIdempotencyKey())
    const url = this.url(call.path, call.query)
    let renewedToken = false

    for (let attempt = 0; ; attempt++) {
      const headers = await this.headers(call, options, idempotencyKey)
      let response: Response
      let body: unknown
      try {
        ;({ response, body } = await this.attempt(url, call, headers, timeout, options.signal))
      } catch (error) {
        const failure = toConnectionError(error, timeout, options.signal)
        // Without a response we cannot know whether a PATCH was applied: only idempotent
        // methods, and POSTs (which carry an Idempotency-Key), are sent again.
        if (attempt < maxRetries && call.method !== 'PATCH' && !options.signal?.aborted) {
          await sleep(backoff(attempt), options.signal)
          continue
        }
        throw failure
      }
      if (response.ok) {
        return {
          body: body as T,
          info: {
            requestId: response.headers.get('request-id') ?? undefined,
            status: response.status,
            headers: response.headers,
            etag: response.headers.get('etag') ?? undefined,
          },
        }
      }
      const error = errorFromResponse(response, body)
      if (
        response.status === 401 &&
        !renewedToken &&
        this.config.tokenRenewable &&
        usesToken(call.credential, this.config)
      ) {
        // The cached token expired early or was revoked: fetch a new one once.
        renewedToken = true
        await this.config.token?.(true)
        attempt--
        continue
      }
      const delay = attempt < maxRetries ? retryDelay(response, error, attempt) : undefined
      if (delay === undefined) throw error
      await sleep(delay, options.signal)
    }
  }

  /**
   * One request whose body is left unread, for streams: the response once its headers arrive
   * within the timeout, or the typed error of a non-2xx answer. No retries: the caller owns
   * reconnecting (the Server-Sent Events stream resumes with Last-Event-ID).
   */
  async open(call: Call, options: RequestOptions & { signal: AbortSignal }): Promise<Response> {
    const headers = await this.headers(call, options, undefined)
    const timeout = options.timeout ?? this.config.timeout
    // One controller for the whole response: the caller's signal aborts the body's reading too;
    // the timeout only covers the wait for the headers.
    const controller = new AbortController()
    const { signal } = options
    if (signal.aborted) controller.abort(signal.reason)
    else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
    const timer = setTimeout(() => controller.abort(new TimeoutMarker()), timeout)
    let response: Response
    try {
      response = await this.config.fetch(this.url(call.path, call.query), {
        method: call.method,
        headers,
        signal: controller.signal,
      })
    } catch (error) {
      const reason: unknown = controller.signal.reason
      throw toConnectionError(reason instanceof TimeoutMarker ? reason : error, timeout, signal)
    } finally {
      clearTimeout(timer)
    }
    if (response.ok) return response
    const text = await response.text().catch(() => '')
    throw errorFromResponse(response, parseBody(text, response.headers.get('content-type')))
  }

  private url(path: string, query: Record<string, QueryValue> | undefined): string {
    const absolute = /^https?:\/\//i.test(path)
    const url = new URL(absolute ? path : this.config.baseUrl.replace(/\/+$/, '') + path)
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(name, String(v))
      else url.searchParams.set(name, String(value))
    }
    return url.toString()
  }

  private async headers(
    call: Call,
    options: RequestOptions,
    idempotencyKey: string | undefined,
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.config.headers }
    const authorization = await this.authorization(call.credential)
    if (authorization !== undefined) headers.authorization = authorization
    if (call.json !== undefined) headers['content-type'] = 'application/json'
    if (call.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch
    return { ...headers, ...options.headers }
  }

  private async authorization(credential: Credential): Promise<string | undefined> {
    if (credential === 'none') return undefined
    if (typeof credential === 'object') return `Basic ${credential.basic}`
    const { apiKey, token } = this.config
    const keyHeader = apiKey === undefined ? undefined : `Basic ${base64(`${apiKey}:`)}`
    if (credential === 'key' && keyHeader !== undefined) return keyHeader
    if (token !== undefined) return `Bearer ${await token(false)}`
    return keyHeader
  }

  private async attempt(
    url: string,
    call: Call,
    headers: Record<string, string>,
    timeout: number,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; body: unknown }> {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new TimeoutMarker()), timeout)
    const onAbort = () => controller.abort(signal?.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    if (signal?.aborted) controller.abort(signal.reason)
    try {
      const response = await this.config.fetch(url, {
        method: call.method,
        headers,
        signal: controller.signal,
        ...(call.json !== undefined
          ? { body: JSON.stringify(call.json) }
          : call.form !== undefined
            ? { body: formEncode(call.form) }
            : {}),
      })
      const text = await response.text()
      return { response, body: parseBody(text, response.headers.get('content-type')) }
    } catch (error) {
      if (controller.signal.reason instanceof TimeoutMarker) throw controller.signal.reason
      throw error
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }
}

class TimeoutMarker extends Error {}

function usesToken(credential: Credential, config: CoreConfig): boolean {
  if (config.token === undefined) return false
  return credential === 'token' || (credential === 'key' && config.apiKey === undefined)
}

function toConnectionError(
  error: unknown,
  timeout: number,
  signal: AbortSignal | undefined,
): PetServiceError {
  if (error instanceof PetServiceError) return error
  if (error instanceof TimeoutMarker) {
    return new TimeoutError({ message: `No response within ${timeout} ms.`, cause: error })
  }
  if (signal?.aborted) return new ConnectionError({ message: 'The request was aborted.', cause: error })
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new ConnectionError({ message: `Could not reach the Pet Service: ${reason}`, cause: error })
}

/** Milliseconds to wait before retrying this error response, or undefined not to retry it. */
function retryDelay(response: Response, error: PetServiceError, attempt: number): number | undefined {
  const retryable =
    response.status === 429 ||
    response.status === 408 ||
    (response.status >= 500 && response.status !== 501) ||
    // Another attempt of this same request still holds the Idempotency-Key (the first may
    // have timed out on our side while it kept running on the server).
    (response.status === 409 && error.code === 'idempotency_request_in_progress')
  if (!retryable) return undefined
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'))
  if (retryAfter === undefined) return backoff(attempt)
  if (retryAfter > MAX_RETRY_AFTER_S * 1000) return undefined
  return retryAfter
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** Exponential backoff with "equal jitter": half fixed, half random, so clients spread out. */
export function backoff(attempt: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** attempt)
  return ceiling / 2 + Math.random() * (ceiling / 2)
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ConnectionError({ message: 'The request was aborted.', cause: signal.reason }))
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(new ConnectionError({ message: 'The request was aborted.', cause: signal?.reason }))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return undefined
  if (contentType !== null && /json/i.test(contentType)) {
    try {
      return JSON.parse(text) as unknown
    } catch {
      return text
    }
  }
  return text
}

export function formEncode(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.set(name, value)
  return params.toString()
}

/** Base64 of the UTF-8 bytes of `text` (btoa alone only takes Latin-1). */
export function base64(text: string): string {
  let binary = ''
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** A UUID v4; crypto.randomUUID is missing on plain-HTTP pages (it needs a secure context). */
export function newIdempotencyKey(): string {
  const c = (
    globalThis as {
      crypto?: { randomUUID?: () => string; getRandomValues?: (array: Uint8Array) => Uint8Array }
    }
  ).crypto
  if (typeof c?.randomUUID === 'function') return c.randomUUID()
  const bytes = new Uint8Array(16)
  if (typeof c?.getRandomValues === 'function') c.getRandomValues(bytes)
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
