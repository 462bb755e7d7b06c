import type { Db } from '../db/schema.ts'
import type { NewRequestLog } from './request-log.ts'
import { insertRequestLogs } from './request-logs-repository.ts'

export interface RequestLogWriterOptions {
  /** Entries per insert statement. */
  batch: number
  /** Entries held while the database catches up; past it, new entries are dropped (and counted). */
  capacity: number
  /** Time between two writes of what the buffer holds (a full batch is written at once). */
  intervalMs: number
  onError(error: unknown): void
}

/**
 * Writes request log entries in batches, off the request path: a request only appends its entry
 * to a buffer, written every `intervalMs` or as soon as it holds a full batch (an entry is
 * readable a moment after its answer). A statement's fixed cost (a round trip, a pooled
 * connection, the query's compilation) dwarfs a row's, so entries wait to share one rather than
 * each turn of the event loop writing the few that finished in it. One insert runs at a time;
 * while it waits for a slow (or locked) database the buffer fills, and once it holds `capacity`
 * entries the next ones are dropped and counted (`dropped`, the `request_logs_dropped_total`
 * metric) rather than making any request wait or the memory grow. A failed insert drops its batch
 * the same way.
 */
export class RequestLogWriter {
  #buffer: NewRequestLog[] = []
  #writing: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #closed = false
  /** Entries dropped since the start: buffer full, failed insert, or recorded after close. */
  dropped = 0
  /** Entries written since the start. */
  written = 0

  constructor(
    private readonly db: Db,
    private readonly options: RequestLogWriterOptions,
  ) {}

  /** Entries waiting to be written. */
  get buffered(): number {
    return this.#buffer.length
  }

  record(entry: NewRequestLog): void {
    if (this.#closed || this.#buffer.length >= this.options.capacity) {
      this.dropped++
      return
    }
    this.#buffer.push(entry)
    if (this.#buffer.length >= this.options.batch) this.#write()
  }

  start(): void {
    if (this.#timer !== undefined || this.#closed) return
    this.#timer = setInterval(() => this.#write(), this.options.intervalMs)
    this.#timer.unref()
  }

  /** Writes what is buffered now (and waits for it); tests and the shutdown use it. */
  async flush(): Promise<void> {
    await this.#writing
    this.#write()
    await this.#writing
  }

  /** Stops taking entries and writes the buffered ones (before the database closes). */
  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#closed = true
    await this.flush()
  }

  #write(): void {
    if (this.#writing !== undefined || this.#buffer.length === 0) return
    this.#writing = this.#drain().finally(() => {
      this.#writing = undefined
    })
  }

  async #drain(): Promise<void> {
    while (this.#buffer.length > 0) {
      const rows = this.#buffer.splice(0, this.options.batch)
      try {
        await insertRequestLogs(this.db, rows)
        this.written += rows.length
      } catch (error) {
        this.dropped += rows.length
        this.options.onError(error)
      }
    }
  }
}
