import { PassThrough } from 'node:stream'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { type EventRow, toEventV1 } from './event.ts'
import { type EventFilter, matchesFilter } from './event-filter.ts'
import type { EventPoller } from './event-poller.ts'
import { eventsOfAccountAfter, findEvent, lastEventSeq } from './events-repository.ts'

export interface EventStreamsOptions {
  /** Streams one account may hold open on this instance. */
  perAccount: number
  /** Time between two `: heartbeat` comments (15 s), so proxies keep an idle stream open. */
  heartbeatMs: number
  /** A client this far behind (bytes not yet taken) is disconnected; it resumes with Last-Event-ID. */
  maxBufferedBytes: number
  /** Rows read at once when replaying after Last-Event-ID. */
  replayBatch: number
}

/** The reconnection delay a client is told to use (SSE `retry:` field, milliseconds). */
const RETRY_MS = 2000

/** One Server-Sent Events message (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export function sseMessage(row: EventRow): string {
  return `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(toEventV1(row))}\n\n`
}

/**
 * The open event streams of this instance: opens them (replay, then live events from the
 * shared poller), counts them per account, and ends them all when the service stops.
 */
export class EventStreams {
  private readonly open = new Set<PassThrough>()
  private readonly perAccount = new Map<string, number>()
  private closed = false

  constructor(
    private readonly db: Db,
    private readonly poller: EventPoller,
    private readonly options: EventStreamsOptions,
  ) {}

  /**
   * A stream of the account's events that pass the filter: those after `lastEventId` first
   * (when given), then each new one as it is written. Throws (before anything is sent) when
   * the account has too many streams open or `lastEventId` names none of its events.
   */
  async openStream(
    accountId: string,
    filter: EventFilter,
    lastEventId: string | undefined,
  ): Promise<PassThrough> {
    if (this.closed) {
      throw new ApiError('service_unavailable', 'The service is shutting down; reconnect in a moment.', {
        headers: { 'retry-after': '1' },
      })
    }
    const held = this.perAccount.get(accountId) ?? 0
    if (held >= this.options.perAccount) {
      throw new ApiError(
        'too_many_streams',
        `Your account already has ${held} event streams open here, the most it may; close one (or wait for it to end) before opening another.`,
        { headers: { 'retry-after': '5' } },
      )
    }
    let replayFrom: number | undefined
    if (lastEventId !== undefined) {
      const last = await findEvent(this.db, accountId, lastEventId)
      if (last === undefined) {
        throw new ApiError(
          'parameter_invalid',
          `Last-Event-ID ${JSON.stringify(lastEventId)} is not an event of your account (events are kept for a limited time); reconnect without it to start from now, and list what you missed with GET /v1/event.`,
          { param: 'last_event_id' },
        )
      }
      replayFrom = last.seq
    }

    this.perAccount.set(accountId, held + 1)
    const stream = new PassThrough()
    this.open.add(stream)
    let live = false
    const pending: EventRow[] = []
    const write = (rows: EventRow[]): void => {
      for (const row of rows) if (matchesFilter(row, filter)) stream.write(sseMessage(row))
      if (stream.writableLength > this.options.maxBufferedBytes) stream.end()
    }
    let subscription: { from: number; unsubscribe(): void } | undefined
    /** Events up to here are not sent live: the replay sends them, or they came before the stream. */
    let after = 0
    try {
      // "Now" is where the poller stands: every event up to it is settled (written, or never to
      // be), later ones come live from the poller in seq order, earlier ones only by replay.
      subscription = await this.poller.subscribe(accountId, (rows) => {
        if (live) write(rows.filter((row) => row.seq > after))
        else pending.push(...rows)
      })
      // Without Last-Event-ID the stream starts after the last event written (the poller may
      // not have read it yet). With it, a client sent events past the poller's "now" (by another
      // instance) has them.
      after = Math.max(subscription.from, replayFrom ?? (await lastEventSeq(this.db)))
    } catch (error) {
      subscription?.unsubscribe()
      this.release(accountId, stream)
      throw error
    }
    const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), this.options.heartbeatMs)
    stream.once('close', () => {
      clearInterval(heartbeat)
      subscription.unsubscribe()
      this.release(accountId, stream)
    })
    // The first bytes send the headers at once, and tell the client how soon to reconnect.
    stream.write(`retry: ${RETRY_MS}\n\n`)

    void this.replay(stream, accountId, filter, replayFrom, subscription.from, write).then(
      () => {
        live = true
        write(pending.filter((row) => row.seq > after))
        pending.length = 0
      },
      (error: unknown) => stream.destroy(error as Error),
    )
    return stream
  }

  /** Ends every stream (the service is stopping); clients reconnect, to another instance. */
  closeAll(): void {
    this.closed = true
    for (const stream of this.open) stream.end()
  }

  get size(): number {
    return this.open.size
  }

  /** Writes the stored events after `fromSeq` up to `untilSeq` (the poller's "now"). */
  private async replay(
    stream: PassThrough,
    accountId: string,
    filter: EventFilter,
    fromSeq: number | undefined,
    untilSeq: number,
    write: (rows: EventRow[]) => void,
  ): Promise<void> {
    if (fromSeq === undefined) return
    let after = fromSeq
    while (after < untilSeq && !stream.writableEnded && !stream.destroyed) {
      const rows = await eventsOfAccountAfter(this.db, accountId, after, filter, this.options.replayBatch)
      const due = rows.filter((row) => row.seq <= untilSeq)
      write(due)
      if (rows.length < this.options.replayBatch || due.length < rows.length) return
      after = rows.at(-1)!.seq
      // Wait for the client to take what was sent before reading more.
      if (stream.writableLength > this.options.maxBufferedBytes / 2) {
        await new Promise((resolve) => {
          stream.once('drain', resolve)
          stream.once('close', resolve)
        })
      }
    }
  }

  private release(accountId: string, stream: PassThrough): void {
    if (!this.open.delete(stream)) return
    const held = (this.perAccount.get(accountId) ?? 1) - 1
    if (held === 0) this.perAccount.delete(accountId)
    else this.perAccount.set(accountId, held)
  }
}
