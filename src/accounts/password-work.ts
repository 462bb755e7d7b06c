import { availableParallelism } from 'node:os'

/**
 * Who a password derivation is charged to: the signed-in account that asked for it, or, before
 * anyone has signed in (sign-in, sign-up), the client's address.
 */
export type PasswordParty = { account: string } | { address: string }

export class PasswordWorkBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many passwords of this party are being hashed at once.')
    this.name = 'PasswordWorkBusyError'
  }
}

export interface PasswordWorkOptions {
  /** Derivations running at once, in all. */
  concurrency: number
  /** Derivations running plus waiting for one party; past it its work is refused. */
  perParty: number
}

/**
 * A scheduler for scrypt derivations, the costliest work the service does (a core held for a
 * long time each, on libuv's thread pool). Without one, a party hashing many passwords at once fills the
 * pool, and everyone else's sign-in queues behind the whole flood. Here at most `concurrency`
 * run at once, waiting work is taken fairly across the parties that asked for it (the party with
 * the least work running first, then the one served longest ago: a party's flood waits behind
 * its own queue, not in front of the others), and a party's work past
 * `perParty` is refused with a PasswordWorkBusyError saying when to come back.
 */
export class PasswordWorkQueue {
  readonly #options: PasswordWorkOptions
  #running = 0
  /** Waiting work per party. */
  readonly #waiting = new Map<string, (() => void)[]>()
  /** Running work per party. */
  readonly #runningOf = new Map<string, number>()
  /** Running plus waiting work per party. */
  readonly #load = new Map<string, number>()
  /** When each party with work was last served (a counter), for the order among equals. */
  readonly #servedAt = new Map<string, number>()
  #served = 0
  #started = 0
  /** Moving average of one derivation's duration, for Retry-After. */
  #averageMs = 150

  constructor(options: PasswordWorkOptions) {
    this.#options = options
  }

  /**
   * Runs `work` when its turn comes. With `signal` (the client went away), work whose turn comes
   * after the signal fired is dropped, rejected with the signal's reason: nobody waits for it.
   */
  run<T>(party: PasswordParty, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const key = partyKey(party)
    const load = this.#load.get(key) ?? 0
    if (load >= this.#options.perParty) {
      return Promise.reject(new PasswordWorkBusyError(this.#retryAfterSeconds(load)))
    }
    this.#load.set(key, load + 1)
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        if (signal?.aborted === true) {
          this.#finish(key)
          reject(signal.reason)
          return
        }
        this.#started++
        const began = performance.now()
        Promise.resolve()
          .then(work)
          .then(
            (value) => {
              this.#finish(key, began)
              resolve(value)
            },
            (error: unknown) => {
              this.#finish(key, began)
              reject(error)
            },
          )
      }
      const queue = this.#waiting.get(key)
      if (queue === undefined) this.#waiting.set(key, [start])
      else queue.push(start)
      this.#startNext()
    })
  }

  /** Derivations started since the process began (not those dropped before their turn). */
  get started(): number {
    return this.#started
  }

  /** Derivations running plus waiting, for one party or for all. */
  load(party?: PasswordParty): number {
    if (party !== undefined) return this.#load.get(partyKey(party)) ?? 0
    let total = 0
    for (const n of this.#load.values()) total += n
    return total
  }

  /**
   * Starts waiting work while there is room: next is the waiting party with the least work
   * running, and among equals the one served longest ago (a party new to the queue first).
   */
  #startNext(): void {
    while (this.#running < this.#options.concurrency) {
      let next: string | undefined
      for (const key of this.#waiting.keys()) {
        if (next === undefined || this.#before(key, next)) next = key
      }
      if (next === undefined) return
      const queue = this.#waiting.get(next) ?? []
      const start = queue.shift()
      if (queue.length === 0) this.#waiting.delete(next)
      if (start === undefined) continue
      this.#running++
      this.#runningOf.set(next, (this.#runningOf.get(next) ?? 0) + 1)
      this.#servedAt.set(next, ++this.#served)
      start()
    }
  }

  #before(a: string, b: string): boolean {
    const running = (this.#runningOf.get(a) ?? 0) - (this.#runningOf.get(b) ?? 0)
    if (running !== 0) return running < 0
    return (this.#servedAt.get(a) ?? 0) < (this.#servedAt.get(b) ?? 0)
  }

  /** Work done (`began`: when it started, for the average), or dropped before it started. */
  #finish(key: string, began?: number): void {
    if (began !== undefined) this.#averageMs = 0.8 * this.#averageMs + 0.2 * (performance.now() - began)
    this.#running--
    decrement(this.#runningOf, key)
    decrement(this.#load, key)
    // A party with nothing left is forgotten; when it comes back it is new to the queue.
    if (!this.#load.has(key)) this.#servedAt.delete(key)
    this.#startNext()
  }

  /** A party's queue drains at one derivation at a time at worst: that long. */
  #retryAfterSeconds(load: number): number {
    return Math.max(1, Math.ceil((load * this.#averageMs) / 1000))
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1
  if (left > 0) counts.set(key, left)
  else counts.delete(key)
}

function partyKey(party: PasswordParty): string {
  return 'account' in party ? `account:${party.account}` : `address:${party.address}`
}

/**
 * libuv runs scrypt on its thread pool, 4 threads by default
 * (https://docs.libuv.org/en/v1.x/threadpool.html; a larger UV_THREADPOOL_SIZE only adds room):
 * keep at least one for file, DNS and other crypto work, and run no more derivations than there
 * are cores.
 */
const LIBUV_DEFAULT_POOL_SIZE = 4

export const passwordWork = new PasswordWorkQueue({
  concurrency: Math.max(1, Math.min(availableParallelism(), LIBUV_DEFAULT_POOL_SIZE - 1)),
  perParty: 8,
})
