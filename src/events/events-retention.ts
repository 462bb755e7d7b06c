import type { Db } from '../db/schema.ts'
import { purgeEventsBefore } from './events-repository.ts'

/** Deletes up to `batch` of the oldest rows created before `cutoff`; answers how many. */
export type PurgeBefore = (db: Db, cutoff: string, batch: number) => Promise<number>

const DAY_MS = 24 * 60 * 60 * 1000

export interface EventsRetentionOptions {
  /** Days an event is kept (`EVENTS_RETENTION_DAYS`). */
  days: number
  /** Rows deleted per statement, so no purge holds a lock (the SQLite writer's) for long. */
  batch: number
  /** Batches per run at most; what is left waits for the next run. */
  maxBatchesPerRun: number
  /** Time between two runs. */
  intervalMs: number
  onError(error: unknown): void
  /** The clock (tests inject one). */
  now?: () => number
  /** Records kept as long as the events, purged after them in each run (the webhook delivery log). */
  alongside?: readonly PurgeBefore[]
  /** Records with a retention period of their own (the request logs), purged in the same runs. */
  others?: readonly { days: number; purgeBefore: PurgeBefore }[]
}

/**
 * Deletes events older than the retention period, the records kept alongside them, and the
 * records with a retention period of their own (`others`), in the background: a run every `intervalMs`, each a bounded number of bounded batches per kind of
 * record. Any number of instances may run it on one database: the deletes are idempotent.
 */
export class EventsRetention {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | undefined

  constructor(
    private readonly db: Db,
    private readonly options: EventsRetentionOptions,
  ) {}

  /**
   * One run: answers how many rows it deleted (events, then the records kept alongside them, then
   * those with a period of their own).
   */
  async purge(): Promise<number> {
    const now = (this.options.now ?? Date.now)()
    const cutoffOf = (days: number) => new Date(now - days * DAY_MS).toISOString()
    const kinds = [
      ...[purgeEventsBefore, ...(this.options.alongside ?? [])].map((purgeBefore) => ({
        purgeBefore,
        cutoff: cutoffOf(this.options.days),
      })),
      ...(this.options.others ?? []).map(({ days, purgeBefore }) => ({
        purgeBefore,
        cutoff: cutoffOf(days),
      })),
    ]
    let deleted = 0
    for (const { purgeBefore, cutoff } of kinds) {
      for (let round = 0; round < this.options.maxBatchesPerRun; round++) {
        const count = await purgeBefore(this.db, cutoff, this.options.batch)
        deleted += count
        if (count < this.options.batch) break
        // Let requests waiting for the database in between.
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
    return deleted
  }

  start(): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => {
      if (this.running !== undefined) return
      this.running = this.purge()
        .catch((error: unknown) => this.options.onError(error))
        .finally(() => {
          this.running = undefined
        })
    }, this.options.intervalMs)
    this.timer.unref()
  }

  /** Stops the runs, after the one in progress (before the database closes). */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }
}
