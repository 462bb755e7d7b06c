/** More missing numbers than this between two rows are not tracked: no set of open transactions holds that many. */
const MAX_HOLES = 10_000

/**
 * The numbers missing from the events' `seq` below the highest one read, and when each is final,
 * for the readers that follow the events in order (the stream poller, the webhooks fan-out).
 *
 * On PostgreSQL an event takes its `seq` when its transaction inserts it, not when it commits:
 * a reader may see 12 while 11 is still uncommitted, and 11 appears later, or never if its
 * transaction rolls back. A transaction that has inserted an event holds a lock on the events
 * table until it ends (it took the lock before drawing the number), so the writers open at any
 * look after a hole was seen include the one that holds it, if that one is still open. Each look
 * keeps, per hole, the writers open at every look since (a shrinking set); once none is left,
 * the transaction has ended, and a read after that look that still misses the number proves it
 * final. No time limit: a late commit is waited for as long as its transaction lasts.
 *
 * SQLite commits one transaction at a time, so a number missing there is final at once.
 *
 * Each look: `narrow(writers)` with the writers open now, then read the holes (and what is new),
 * then `resolve(found)` with the holes that read filled, then `note(after, seqs)` with the rows
 * read past `after`.
 */
export class SeqHoles {
  /** seq → the writers that may still hold it (undefined: none looked at since it was seen). */
  readonly #holes: Map<number, Set<string> | undefined>

  constructor(
    /** True on SQLite: transactions commit one at a time, so no number is waited for. */
    private readonly serialCommits: boolean,
    holes?: Map<number, Set<string> | undefined>,
  ) {
    this.#holes = holes ?? new Map()
  }

  /** An independent copy (a reader that may roll its round back keeps the original). */
  clone(): SeqHoles {
    return new SeqHoles(this.serialCommits, new Map(this.#holes))
  }

  get size(): number {
    return this.#holes.size
  }

  /** The missing numbers still waited for. */
  seqs(): number[] {
    return [...this.#holes.keys()]
  }

  /** The lowest number still waited for: every row below it has been read or will never exist. */
  lowest(): number | undefined {
    let lowest: number | undefined
    for (const seq of this.#holes.keys()) if (lowest === undefined || seq < lowest) lowest = seq
    return lowest
  }

  /** Before reading the holes again: `writers` are the transactions holding a lock on events now. */
  narrow(writers: ReadonlySet<string> | undefined): void {
    for (const [seq, held] of this.#holes) {
      const still =
        writers === undefined
          ? new Set<string>()
          : new Set([...(held ?? writers)].filter((w) => writers.has(w)))
      this.#holes.set(seq, still)
    }
  }

  /** After that read: `found` filled their holes; a hole no writer of narrow() holds is final. */
  resolve(found: Iterable<number>): void {
    for (const seq of found) this.#holes.delete(seq)
    for (const [seq, held] of this.#holes) if (held?.size === 0) this.#holes.delete(seq)
  }

  /** The rows read past `after` (ascending `seqs`): the numbers skipped between them are holes. */
  note(after: number, seqs: Iterable<number>): void {
    let expected = after + 1
    for (const seq of seqs) {
      if (!this.serialCommits && seq - expected <= MAX_HOLES) {
        for (let missing = expected; missing < seq; missing++) this.#holes.set(missing, undefined)
      }
      expected = Math.max(expected, seq + 1)
    }
  }
}
