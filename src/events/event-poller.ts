import type { Db } from '../db/schema.ts'
import type { EventRow } from './event.ts'
import { eventsAfter, eventsWithSeq, lastEventSeq } from './events-repository.ts'

export interface EventPollerOptions {
  /** Time between two reads of the table while anyone listens (~250 ms). */
  intervalMs: number
  /** Rows read at once; a full batch is followed by the next at once. */
  batch: number
  /**
   * How long a skipped sequence number is looked for again. On PostgreSQL numbers are taken
   * when a transaction inserts, not when it commits, so a later number can become visible
   * first; the earlier one shows up when its transaction commits (or never, if it rolled back).
   */
  gapWaitMs: number
  onError(error: unknown): void
  now?: () => number
}

/** Receives the new events of one account, oldest first. */
export type EventListener = (rows: EventRow[]) => void

/**
 * One reader of the events table per process, shared by every open stream: it polls by `seq`
 * (the same on SQLite and PostgreSQL, and it sees events written by any instance) only while
 * someone listens, and hands each account's new rows to that account's listeners.
 */
export class EventPoller {
  private readonly listeners = new Map<string, Set<EventListener>>()
  private count = 0
  /** Highest sequence number read; undefined while nobody listens. */
  private cursor: number | undefined
  private starting: Promise<number> | undefined
  private readonly gaps = new Map<number, number>()
  private timer: NodeJS.Timeout | undefined
  private polling: Promise<void> | undefined
  private closed = false

  constructor(
    private readonly db: Db,
    private readonly options: EventPollerOptions,
  ) {}

  /**
   * Starts delivering the account's new events (those the poller reads from now on); answers
   * the function that stops the delivery.
   */
  async subscribe(accountId: string, listener: EventListener): Promise<{ unsubscribe(): void }> {
    await this.start()
    const set = this.listeners.get(accountId) ?? new Set<EventListener>()
    this.listeners.set(accountId, set)
    set.add(listener)
    this.count++
    let subscribed = true
    return {
      unsubscribe: () => {
        if (!subscribed) return
        subscribed = false
        set.delete(listener)
        if (set.size === 0) this.listeners.delete(accountId)
        if (--this.count === 0) this.stop()
      },
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.stop()
    await this.polling
  }

  private async start(): Promise<number> {
    if (this.closed) throw new Error('The event poller is closed.')
    if (this.cursor !== undefined) return this.cursor
    this.starting ??= lastEventSeq(this.db).then(
      (seq) => {
        this.starting = undefined
        this.cursor = seq
        this.schedule()
        return seq
      },
      (error: unknown) => {
        this.starting = undefined
        throw error
      },
    )
    return this.starting
  }

  private stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.cursor = undefined
    this.gaps.clear()
  }

  /** One chain of timers at a time: a poll in flight schedules the next when it ends. */
  private schedule(): void {
    if (this.closed || this.cursor === undefined || this.timer !== undefined || this.polling !== undefined) {
      return
    }
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.polling = this.poll().finally(() => {
        this.polling = undefined
        this.schedule()
      })
    }, this.options.intervalMs)
  }

  private async poll(): Promise<void> {
    try {
      await this.pollGaps()
      // Read on while batches come back full, a bounded number of times per tick.
      for (let round = 0; round < 20 && this.cursor !== undefined; round++) {
        const after = this.cursor
        const rows = await eventsAfter(this.db, after, this.options.batch)
        if (this.cursor !== after) return
        this.noteGaps(after, rows)
        this.dispatch(rows)
        if (rows.length < this.options.batch) return
      }
    } catch (error) {
      this.options.onError(error)
    }
  }

  private async pollGaps(): Promise<void> {
    if (this.gaps.size === 0) return
    const now = (this.options.now ?? Date.now)()
    for (const [seq, until] of this.gaps) if (until < now) this.gaps.delete(seq)
    const found = await eventsWithSeq(this.db, [...this.gaps.keys()].slice(0, 1000))
    for (const row of found) this.gaps.delete(row.seq)
    this.dispatch(found)
  }

  /** Remembers numbers skipped between `after` and the rows read, and moves the cursor. */
  private noteGaps(after: number, rows: EventRow[]): void {
    const until = (this.options.now ?? Date.now)() + this.options.gapWaitMs
    let expected = after + 1
    for (const row of rows) {
      // A few numbers per transaction at most; a huge jump (a reset sequence) is not chased.
      for (let seq = expected; seq < row.seq && this.gaps.size < 10_000; seq++) this.gaps.set(seq, until)
      expected = row.seq + 1
    }
    const last = rows.at(-1)
    if (last !== undefined) this.cursor = last.seq
  }

  private dispatch(rows: EventRow[]): void {
    if (rows.length === 0) return
    const byAccount = new Map<string, EventRow[]>()
    for (const row of rows) {
      if (!this.listeners.has(row.account_id)) continue
      const list = byAccount.get(row.account_id)
      if (list === undefined) byAccount.set(row.account_id, [row])
      else list.push(row)
    }
    for (const [accountId, list] of byAccount) {
      for (const listener of this.listeners.get(accountId) ?? []) listener(list)
    }
  }
}
