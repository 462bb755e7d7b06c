import { backoff, type Core, parseRetryAfter, type QueryValue } from './core.ts'
import { ConnectionError, PetServiceError } from './errors.ts'
import type { Event, EventStreamParams } from './event-types.ts'
import { SseParser } from './sse.ts'

export interface EventStreamOptions {
  /** Ends the stream: the loop over it finishes quietly. */
  signal?: AbortSignal
  /** Resume after this event (`evt_…`): events after it are replayed first, then live ones. */
  lastEventId?: string
  /** Milliseconds to wait for each connection's response headers. Default: the client's timeout. */
  timeout?: number
  /**
   * Reconnections in a row that may fail (network errors, 429, 5xx) before the stream throws.
   * Default: no limit, as a browser's EventSource keeps trying.
   */
  maxRetries?: number
  /**
   * Milliseconds without a byte (the service sends a heartbeat every 15 s) after which the
   * connection is taken for dead and replaced. Default 45 000.
   */
  idleTimeout?: number
  /** Extra headers for each connection. */
  headers?: Record<string, string>
  /** Called before each reconnection: for a "reconnecting…" notice. */
  onReconnect?: (info: ReconnectInfo) => void
}

export interface ReconnectInfo {
  /** Reconnections in a row so far that got no event through (1 for the first). */
  attempt: number
  delayMs: number
  /** Where the next connection resumes. */
  lastEventId: string | undefined
  /** Why the last connection ended. */
  error: PetServiceError
}

export interface EventStreamMessage<T extends Event = Event> {
  event: T
  /** The event's JSON as received. */
  data: string
}

const DEFAULT_IDLE_TIMEOUT_MS = 45_000

class IdleMarker extends Error {}

/**
 * `GET /v1/event/stream` (Server-Sent Events) as an async iterator of events. A dropped or
 * silent connection is replaced, resuming with `Last-Event-ID` from the last event received, so
 * a consumer sees every event once and in order across reconnections. `lastEventId` is where it
 * stands now: keep it to resume in a later run.
 */
export class EventStream<T extends Event = Event> implements AsyncIterable<T> {
  lastEventId: string | undefined

  constructor(
    private readonly core: Core,
    private readonly params: EventStreamParams,
    private readonly options: EventStreamOptions = {},
  ) {
    this.lastEventId = options.lastEventId
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const message of this.messages()) yield message.event
  }

  /**
   * The stream's messages with the event's JSON exactly as the service sent it (`data`), which
   * is also a webhook's body byte for byte: for forwarding events elsewhere, signed.
   */
  async *messages(): AsyncGenerator<EventStreamMessage<T>, void, undefined> {
    const { signal } = this.options
    const maxRetries = this.options.maxRetries ?? Number.POSITIVE_INFINITY
    // A function, not a narrowed property: the signal changes under awaits.
    const aborted = () => signal?.aborted === true
    let failures = 0
    let serverRetryMs = 0
    while (!aborted()) {
      let ended: PetServiceError
      let retryAfterMs: number | undefined
      const received = { any: false }
      try {
        for await (const message of this.connect(received, (ms) => {
          serverRetryMs = ms
        })) {
          yield message
        }
        ended = new ConnectionError({ message: 'The service closed the event stream.' })
      } catch (error) {
        if (aborted()) return
        // Reconnect after a broken connection or a passing refusal (429, 5xx); anything else
        // (a revoked key, a bad filter, a malformed message) would fail again the same way.
        const passing =
          error instanceof ConnectionError ||
          (error instanceof PetServiceError && error.status !== undefined && retryable(error.status))
        if (!passing) throw error
        ended = error
        retryAfterMs = parseRetryAfter(error.headers?.get('retry-after') ?? null)
      }
      // Anything received proves the connection worked: start the backoff again from the bottom.
      failures = received.any ? 1 : failures + 1
      if (failures > maxRetries) throw ended
      const delayMs = Math.max(serverRetryMs, retryAfterMs ?? backoff(failures - 1))
      this.options.onReconnect?.({ attempt: failures, delayMs, lastEventId: this.lastEventId, error: ended })
      if (!(await sleep(delayMs, signal))) return
    }
  }

  /** One connection: its events until it ends (returns) or fails (throws). */
  private async *connect(
    received: { any: boolean },
    onRetry: (ms: number) => void,
  ): AsyncGenerator<EventStreamMessage<T>> {
    const attempt = new AbortController()
    const { signal } = this.options
    const onAbort = () => attempt.abort(signal?.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    const idleTimeout = this.options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_MS
    let idle: ReturnType<typeof setTimeout> | undefined
    const alive = () => {
      clearTimeout(idle)
      idle = setTimeout(() => attempt.abort(new IdleMarker()), idleTimeout)
    }
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...this.options.headers }
      if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId
      const response = await this.core.open(
        { method: 'GET', path: '/v1/event/stream', query: query(this.params), credential: 'key' },
        {
          signal: attempt.signal,
          headers,
          ...(this.options.timeout === undefined ? {} : { timeout: this.options.timeout }),
        },
      )
      if (response.body === null) throw new ConnectionError({ message: 'The event stream has no body.' })
      alive()
      const queue: { id: string | undefined; data: string }[] = []
      const parser = new SseParser({ message: (m) => queue.push(m), retry: onRetry })
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          received.any = true
          alive()
          parser.feed(value)
          for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
            const event = parseEvent<T>(m.data)
            if (m.id !== undefined) this.lastEventId = m.id
            // The watchdog waits for the service, not for the consumer: paused while it works.
            clearTimeout(idle)
            yield { event, data: m.data }
            alive()
          }
        }
      } finally {
        reader.releaseLock()
      }
    } catch (error) {
      if (attempt.signal.reason instanceof IdleMarker) {
        throw new ConnectionError({
          message: `No data, not even a heartbeat, for ${idleTimeout} ms: reconnecting.`,
          cause: error,
        })
      }
      if (error instanceof PetServiceError || signal?.aborted === true) throw error
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
      throw new ConnectionError({
        message: `The event stream broke: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause: error,
      })
    } finally {
      clearTimeout(idle)
      signal?.removeEventListener('abort', onAbort)
      attempt.abort()
    }
  }
}

function retryable(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501)
}

function query(params: EventStreamParams): Record<string, QueryValue> {
  const out: Record<string, QueryValue> = {}
  for (const [name, value] of Object.entries(params)) out[name] = value as QueryValue
  return out
}

function parseEvent<T>(data: string): T {
  try {
    return JSON.parse(data) as T
  } catch (error) {
    throw new PetServiceError({
      message: `The event stream sent data that is not JSON: ${data.slice(0, 100)}`,
      cause: error,
    })
  }
}

/** Waits `ms`; false when the signal ended the wait. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve(false)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
