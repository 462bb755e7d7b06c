import { Redis } from 'ioredis'

interface Log {
  warn(details: object, message: string): void
  info(details: object, message: string): void
}

/**
 * One Redis connection for the limiters of an instance, and whether it answers. Every wait is
 * bounded by `timeoutMs` (connecting, a command). From a failure (a command timing out, the
 * connection closing or failing to open) until Redis answers again, the limiters use their
 * fallbacks without asking Redis at all; a PING each second, or the connection coming back,
 * ends that. Each change is logged once.
 */
export class SharedRedis {
  readonly client: Redis
  #answering = true
  /** Times Redis stopped answering, and limiter decisions made without it since the start (metrics). */
  #outages = 0
  #fallbacks = 0
  #probe: NodeJS.Timeout | undefined
  #closed = false

  constructor(
    url: string,
    timeoutMs: number,
    private readonly log: Log,
  ) {
    this.client = new Redis(url, {
      connectTimeout: timeoutMs,
      // A command waits for a connection being made (at start), but never longer than this.
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    })
    // Without a listener ioredis prints every failed reconnection; the state change is what matters.
    this.client.on('error', (error: Error) => this.failed(error))
    this.client.on('close', () => this.failed(new Error('connection to Redis closed')))
    this.client.on('ready', () => this.#recovered())
  }

  /** False from a failure until Redis answers again. */
  get answering(): boolean {
    return this.#answering
  }

  get outages(): number {
    return this.#outages
  }

  get fallbacks(): number {
    return this.#fallbacks
  }

  /** A limiter decided alone, with its per-instance fallback, because Redis did not answer. */
  fellBack(): void {
    this.#fallbacks++
  }

  failed(error: unknown): void {
    if (!this.#answering || this.#closed) return
    this.#answering = false
    this.#outages++
    this.log.warn(
      { err: { message: error instanceof Error ? error.message : String(error) } },
      'Redis does not answer: rate limits are per-instance until it does',
    )
    this.#probe = setInterval(() => {
      this.client.ping().then(
        () => this.#recovered(),
        () => {},
      )
    }, 1000)
    this.#probe.unref()
  }

  #recovered(): void {
    if (this.#answering || this.#closed) return
    this.#answering = true
    clearInterval(this.#probe)
    this.log.info({}, 'Redis answers again: rate limits are shared by all instances again')
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#probe)
    this.client.disconnect()
  }
}
