/**
 * Remembers that the database said it is full (SQLITE_FULL, PostgreSQL's disk_full), so that
 * /readyz reports it and a load balancer can prefer instances whose writes succeed. A create
 * that succeeds clears it; so does a minute without news, so that an instance nobody sends
 * writes to any more is tried again.
 */
export class StorageFullFlag {
  #until = 0

  constructor(
    private readonly holdMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  raise(): void {
    this.#until = this.now() + this.holdMs
  }

  clear(): void {
    this.#until = 0
  }

  get raised(): boolean {
    return this.#until !== 0 && this.now() < this.#until
  }
}
