import { isPostgres } from '../db/dialect.ts'
import type { Db } from '../db/schema.ts'
import type { EventRow } from './event.ts'
import { eventsAfter, eventsWithSeq, lastEventSeq, openEventWriters } from './events-repository.ts'
import { SeqHoles } from './seq-holes.ts'

export interface EventPollerOptions {
  /** Time between two reads of the table while anyone listens. */
  intervalMs: number
  /** Rows read at once; a full batch is followed by the next at once. */
  batch: number
  onError(error: unknown): void
}

/** Receives the new events of one account, oldest first. */
export type EventListener = (rows: EventRow[]) => void

/** Rows read past a number still waited for, at most; reading stops there until it resolves. */
const MAX_HELD = 20_000

/**
 * One reader of the events table per process, shared by every open stream: it polls by `seq`
 * (the same on SQLite and PostgreSQL, and it sees events written by any instance) only while
 * someone listens, and hands each account's new rows to that account's listeners, in `seq`
 * order and without a gap: a row read past a number whose transaction may still commit waits
 * until that number is read or known never to come (seq-holes.ts). So everything up to the last
 * event a client was sent is settled, and resuming after it misses nothing.
 */
export class EventPoller {
  private readonly listeners = new Map<string, Set<EventListener>>()
  private count = 0
  /** Every event up to this seq has been handed out or will never exist; undefined while nobody listens. */
  private settled: number | undefined
  private starting: Promise<void> | undefined
  /** Highest seq read. */
  private scannedTo = 0
  private holes: SeqHoles
  /** Rows read past a hole, by seq, waiting for it. */
  private held: EventRow[] = []
  /** Counts stops, so that a look begun before one is dropped. */
  private generation = 0
  private timer: NodeJS.Timeout | undefined
  private polling: Promise<void> | undefined
  private closed = false

  constructor(
    private readonly db: Db,
    private readonly options: EventPollerOptions,
  ) {
    this.holes = new SeqHoles(!isPostgres(db))
  }

  /**
   * Starts delivering the account's events after `from` (in seq order, as they settle); answers
   * `from` and the function that stops the delivery.
   */
  async subscribe(
    accountId: string,
    listener: EventListener,
  ): Promise<{ from: number; unsubscribe(): void }> {
    // Again if the last listener left while this one waited for the start.
    while (this.settled === undefined) await this.start()
    const set = this.listeners.get(accountId) ?? new Set<EventListener>()
    this.listeners.set(accountId, set)
    set.add(listener)
    this.count++
    let subscribed = true
    return {
      // Read with the listener added, in the same turn: every later row reaches it.
      from: this.settled,
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

  private async start(): Promise<void> {
    if (this.closed) throw new Error('The event poller is closed.')
    if (this.settled !== undefined) return
    this.starting ??= this.settle().finally(() => {
      this.starting = undefined
    })
    return this.starting
  }

  /**
   * Starts from the last event written, once it is settled: the transactions writing events
   * when it was read may hold lower numbers, so the start waits until they have all ended.
   */
  private async settle(): Promise<void> {
    const generation = this.generation
    const last = await lastEventSeq(this.db)
    let open = await openEventWriters(this.db)
    while (open !== undefined && open.size > 0 && !this.closed && generation === this.generation) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.options.intervalMs, 50)))
      const now = await openEventWriters(this.db)
      open = new Set([...open].filter((w) => now?.has(w)))
    }
    if (this.closed || generation !== this.generation) return
    this.settled = last
    this.scannedTo = last
    this.schedule()
  }

  private stop(): void {
    this.generation++
    clearTimeout(this.timer)
    this.timer = undefined
    this.settled = undefined
    this.holes = new SeqHoles(!isPostgres(this.db))
    this.held = []
  }

  /** One chain of timers at a time: a poll in flight schedules the next when it ends. */
  private schedule(): void {
    if (this.closed || this.settled === undefined || this.timer !== undefined || this.polling !== undefined) {
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
    const generation = this.generation
    try {
      // On a copy, kept only when the whole look succeeds: a failed one leaves nothing half done.
      const holes = this.holes.clone()
      holes.narrow(await openEventWriters(this.db))
      const waited = holes.seqs()
      const filled: EventRow[] = []
      for (let i = 0; i < waited.length; i += 1000) {
        filled.push(...(await eventsWithSeq(this.db, waited.slice(i, i + 1000))))
      }
      holes.resolve(filled.map((row) => row.seq))
      const read = [...filled]
      let scannedTo = this.scannedTo
      // Read on while batches come back full, a bounded number of times per tick.
      for (let round = 0; round < 20 && this.held.length + read.length < MAX_HELD; round++) {
        const rows = await eventsAfter(this.db, scannedTo, this.options.batch)
        holes.note(
          scannedTo,
          rows.map((row) => row.seq),
        )
        read.push(...rows)
        scannedTo = rows.at(-1)?.seq ?? scannedTo
        if (rows.length < this.options.batch) break
      }
      // Stopped (nobody listened) meanwhile: this look belongs to no one.
      if (generation !== this.generation) return
      this.holes = holes
      this.scannedTo = scannedTo
      this.release(read)
    } catch (error) {
      this.options.onError(error)
    }
  }

  /** Hands out, in seq order, the rows read that no number still waited for precedes. */
  private release(read: EventRow[]): void {
    const rows = [...this.held, ...read].sort((a, b) => a.seq - b.seq)
    const limit = this.holes.lowest() ?? Number.POSITIVE_INFINITY
    const ready = rows.filter((row) => row.seq < limit)
    this.held = rows.filter((row) => row.seq >= limit)
    this.settled = Math.min(limit - 1, this.scannedTo)
    this.dispatch(ready)
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
