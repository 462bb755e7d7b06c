import { type EventLoopUtilization, performance } from 'node:perf_hooks'

/**
 * The part of the process's time deliveries keep while requests saturate it, once that has lasted
 * SATURATED_GRACE_MS (docs/webhooks.md).
 */
export const SATURATED_SHARE = 0.1
export const SATURATED_GRACE_MS = 5_000
/** Deliveries a window allows while a burst of requests saturates the loop, before the grace ends. */
const BURST_FLOOR = 2
/** What a delivery is taken to cost until the worker has measured it (fan-out, claim, send, record). */
const INITIAL_MS_PER_DELIVERY = 0.5
/** Deliveries done in quiet windows that make one measure of their cost. */
const MEASURED_DELIVERIES = 100

export interface CpuShareOptions {
  /** Length of a window: the allowance is set anew for each. */
  windowMs: number
  /** Requests received so far by this process (a counter that only grows). */
  requests: () => number
  /** Deliveries the first window allows (default 64). */
  initial?: number
  /** The most deliveries a window allows, however idle the process (default 2,000). */
  max?: number
  /** The event loop's utilisation since the previous call, 0 to 1, and the time in ms (tests inject them). */
  utilization?: () => number
  now?: () => number
}

/**
 * How many deliveries the worker may start per window, adapted to how busy the event loop is:
 * the worker shares its process (and, on SQLite, the one writer) with the API. When the loop is
 * near saturation (requests coming as fast as the process can answer), the allowance falls at
 * once to a trickle, so a burst of requests keeps all its speed and deliveries wait for it to
 * pass; a saturation that lasts past SATURATED_GRACE_MS is no burst, and deliveries then keep
 * SATURATED_SHARE of the process's time, so they still progress. When there is room, the
 * allowance grows back and the backlog drains. The share's floor is a window's share divided by
 * what a delivery costs, measured in windows with no requests (then the loop's busy time is the
 * worker's own).
 * The decisions follow the event loop utilisation of each window
 * (https://nodejs.org/api/perf_hooks.html#performanceeventlooputilizationutilization1-utilization2),
 * applied only while requests are arriving: with none, the worker's own work is all there is,
 * and it goes at full speed. Arrivals, not answers: a worker that starved the loop would see
 * no answers and take that for a quiet process.
 */
export class CpuShare {
  readonly #windowMs: number
  readonly #requests: () => number
  readonly #max: number
  readonly #utilization: () => number
  readonly #now: () => number
  #rate: number
  #allowance: number
  #windowStart: number
  #requestsSeen = 0
  /** Deliveries done since the window began, and the quiet windows' busy time and deliveries. */
  #done = 0
  #quietBusyMs = 0
  #quietDone = 0
  /** When the windows began to be saturated, one after another (undefined: the last was not). */
  #saturatedSince: number | undefined
  #msPerDelivery = INITIAL_MS_PER_DELIVERY

  constructor(options: CpuShareOptions) {
    this.#windowMs = options.windowMs
    this.#requests = options.requests
    this.#max = options.max ?? 2000
    this.#rate = options.initial ?? 64
    this.#allowance = this.#rate
    this.#utilization = options.utilization ?? loopUtilization()
    this.#now = options.now ?? (() => performance.now())
    this.#windowStart = this.#now()
  }

  /** Deliveries a window allows while saturation lasts: SATURATED_SHARE of it at the measured cost. */
  get floor(): number {
    return Math.max(BURST_FLOOR, Math.floor((SATURATED_SHARE * this.#windowMs) / this.#msPerDelivery))
  }

  /** Deliveries that may start now (the current window's allowance left). */
  available(): number {
    const now = this.#now()
    const elapsed = now - this.#windowStart
    if (elapsed >= this.#windowMs) {
      const busy = this.#utilization()
      this.#windowStart = now
      const requests = this.#requests()
      const serving = requests !== this.#requestsSeen
      this.#requestsSeen = requests
      if (!serving) {
        // With no requests, the loop's busy time is the worker's: fan-out, claims, sends, records.
        this.#quietBusyMs += busy * elapsed
        this.#quietDone += this.#done
        if (this.#quietDone >= MEASURED_DELIVERIES) {
          const sample = Math.min(20, Math.max(0.05, this.#quietBusyMs / this.#quietDone))
          this.#msPerDelivery = 0.7 * this.#msPerDelivery + 0.3 * sample
          this.#quietBusyMs = 0
          this.#quietDone = 0
        }
      }
      this.#done = 0
      const saturated = serving && busy > 0.8
      const eased = !serving || busy < 0.6
      // The load lasts until a window has room to spare: one in between (a machine shared with
      // other processes gives a few) does not start the grace again.
      if (eased) this.#saturatedSince = undefined
      else if (saturated) this.#saturatedSince ??= now - elapsed
      const lasting = this.#saturatedSince !== undefined && now - this.#saturatedSince >= SATURATED_GRACE_MS
      if (!serving) this.#rate = this.#max
      // Requests first: the window they saturate the loop, the worker drops to a trickle (a
      // gradual decrease spent the first second of every burst sharing the loop).
      else if (saturated) this.#rate = lasting ? this.floor : BURST_FLOOR
      else if (eased) this.#rate = Math.min(this.#max, Math.ceil(this.#rate * 1.5) + 2)
      else if (lasting) this.#rate = Math.max(this.#rate, this.floor)
      this.#allowance = this.#rate
    }
    return this.#allowance
  }

  /** Whether requests saturate the loop: since a saturated window, none has had room to spare. */
  saturated(): boolean {
    return this.#saturatedSince !== undefined
  }

  /** `n` deliveries may start: they come off this window's allowance. */
  take(n: number): void {
    this.#allowance = Math.max(0, this.#allowance - n)
  }

  /** A delivery's attempt was recorded (what its cost is measured by). */
  done(): void {
    this.#done++
  }
}

/** The event loop's utilisation since the previous call. */
function loopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization()
  return () => {
    const now = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(now, last).utilization
    last = now
    return busy
  }
}
