import { type EventLoopUtilization, performance } from 'node:perf_hooks'

/**
 * How many deliveries the worker may start per window, adapted to how busy the event loop is:
 * the worker shares its process (and, on SQLite, the one writer) with the API, and a delivery
 * costs a few requests' worth of work. When the loop is near saturation (requests coming as fast
 * as the process can answer), the allowance falls quickly to a trickle, so the request path keeps
 * its speed and the backlog waits; when there is room, it grows back and the backlog drains.
 * A gradual increase and a drop to the floor on the event loop utilisation of each window
 * (https://nodejs.org/api/perf_hooks.html#performanceeventlooputilizationutilization1-utilization2),
 * applied only while requests are arriving: with none, the worker's own work is all there is,
 * and it goes at full speed. Arrivals, not answers: a worker that starved the loop would see
 * no answers and take that for a quiet process.
 */
export class CpuShare {
  #allowance: number
  #windowStart = performance.now()
  #elu: EventLoopUtilization = performance.eventLoopUtilization()
  #requestsSeen = 0

  constructor(
    private readonly windowMs: number,
    /** Requests received so far by this process (a counter that only grows). */
    private readonly requests: () => number,
    private readonly min = 2,
    private readonly max = 2000,
    private rate = 64,
  ) {
    this.#allowance = rate
  }

  /** Deliveries that may start now (the current window's allowance left). */
  available(): number {
    const now = performance.now()
    if (now - this.#windowStart >= this.windowMs) {
      const elu = performance.eventLoopUtilization()
      const busy = performance.eventLoopUtilization(elu, this.#elu).utilization
      this.#elu = elu
      this.#windowStart = now
      const requests = this.requests()
      const serving = requests !== this.#requestsSeen
      this.#requestsSeen = requests
      if (!serving) this.rate = this.max
      // Requests first: the window they saturate the loop, the worker drops to its floor (a
      // gradual decrease spent the first second of every burst sharing the loop).
      else if (busy > 0.8) this.rate = this.min
      else if (busy < 0.6) this.rate = Math.min(this.max, Math.ceil(this.rate * 1.5) + 2)
      this.#allowance = this.rate
    }
    return this.#allowance
  }

  /** Whether the loop was near saturation at the last look (the allowance at its floor). */
  saturated(): boolean {
    return this.rate <= this.min
  }

  take(n: number): void {
    this.#allowance = Math.max(0, this.#allowance - n)
  }
}
