import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import type { Clock } from './clock.ts'
import { CpuShare } from './cpu-share.ts'
import { FanOut } from './fan-out.ts'
import { nextAttemptAt } from './retry-schedule.ts'
import type { SecretBox } from './secret-box.ts'
import { ConnectionPools, type SendResult, sendWebhook } from './sender.ts'
import { signedHeaders } from './signing.ts'
import { type Resolve, UrlRefused, vetUrl } from './url-policy.ts'
import type { EndpointRow } from './webhook-endpoint.ts'
import * as repo from './webhooks-repository.ts'
import { signingSecrets } from './webhooks-service.ts'

export interface DeliveryWorkerOptions {
  db: Db
  box: SecretBox
  clock: Clock
  resolve: Resolve
  insecure: boolean
  timeoutMs: number
  concurrencyPerEndpoint: number
  disableAfterDays: number
  log: FastifyBaseLogger
  /** Requests this process has received so far: the worker yields to them (see CpuShare). */
  requestsReceived?: () => number
  /** How the worker yields to requests (default: a CpuShare over requestsReceived). */
  cpuShare?: CpuShare
  /** How long the worker idles when there is nothing to do (new events are found by polling). */
  pollMs?: number
  /** How long a hole in the events' seq is waited for (see FanOut); 0 on SQLite. */
  gapGraceMs: number
  /** Deliveries sent at once by this instance, all endpoints together. */
  maxInFlight?: number
  userAgent?: string
  random?: () => number
}

const DAY_MS = 24 * 60 * 60 * 1000
/** A fan-out round that read this many events likely left more behind. */
const FAN_OUT_BACKLOG = 500
const SATURATED_FAN_OUT_MS = 5_000

/**
 * The webhooks worker: fans new events out into deliveries, claims due deliveries from the
 * database (several instances share them; a claim is a lease, so a crashed instance's claims
 * come back once they lapse), sends them with bounded concurrency per endpoint, and records each
 * attempt: any 2xx within the timeout succeeds, anything else is retried on the schedule of
 * src/webhooks/retry-schedule.ts, then marked failed. Never on a request's path: creates only
 * insert their event.
 */
export class DeliveryWorker {
  readonly #fanOut: FanOut
  readonly #pollMs: number
  readonly #maxInFlight: number
  readonly #leaseMs: number
  /** In-flight sends per endpoint id. */
  readonly #busy = new Map<string, number>()
  /** Claimed deliveries waiting for their endpoint's turn. */
  readonly #queued = new Map<string, { delivery: repo.DeliveryRow; endpoint: EndpointRow }[]>()
  readonly #sends = new Set<Promise<void>>()
  #inFlight = 0
  readonly #pools = new ConnectionPools()
  /** Unset in runOnce (tests): everything due is sent. */
  #share: CpuShare | undefined
  /** Claims are made in batches of at least this many (each claim is a query and a write). */
  readonly #claimBatch: number
  /** When a claim that left busy endpoints out last found nothing (see #claim). */
  #emptyExcludingClaimAt = Number.NEGATIVE_INFINITY
  #stopping = false
  #loop: Promise<void> | undefined
  #wake: (() => void) | undefined

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.#fanOut = new FanOut(options.db, options.clock, options.gapGraceMs)
    this.#pollMs = options.pollMs ?? 250
    this.#maxInFlight = options.maxInFlight ?? 32
    this.#claimBatch = Math.max(1, Math.floor(this.#maxInFlight / 2))
    // A send starts only while its claim has at least a timeout and a margin left (see #pump),
    // so no send outlives its claim; a crashed instance's claims come back this soon.
    this.#leaseMs = 2 * options.timeoutMs + 5_000
  }

  start(): void {
    this.#share ??=
      this.options.cpuShare ?? new CpuShare(this.#pollMs, this.options.requestsReceived ?? (() => 0))
    this.#loop ??= this.#run()
  }

  /** Stops claiming, gives queued deliveries back, and waits for the sends under way. */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#wake?.()
    await this.#loop
    const queued = [...this.#queued.values()].flat().map((q) => q.delivery.id)
    this.#queued.clear()
    await Promise.allSettled([...this.#sends])
    this.#pools.close()
    await repo
      .releaseDeliveries(this.options.db, queued)
      .catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'could not release queued webhook deliveries'),
      )
  }

  /** One full round (tests): fan out, then claim and send everything due, and wait for it. */
  async runOnce(): Promise<void> {
    while ((await this.#fanOut.run()) > 0) {}
    while ((await this.#claim()) > 0 || this.#sends.size > 0) {
      if (this.#sends.size > 0) await Promise.race([...this.#sends])
    }
  }

  async #run(): Promise<void> {
    let lastFanOut = Number.NEGATIVE_INFINITY
    let backlog = false
    while (!this.#stopping) {
      let more = false
      try {
        // New events are looked for every poll interval (or at once while a backlog lasts), not
        // on every wake-up: each look is a write transaction.
        // While requests saturate the process, new events wait (up to a few seconds) too.
        const saturated = this.#share?.saturated() ?? false
        const interval = saturated ? SATURATED_FAN_OUT_MS : this.#pollMs
        let fannedOut = false
        if ((backlog && !saturated) || performance.now() - lastFanOut >= interval) {
          lastFanOut = performance.now()
          backlog = (await this.#fanOut.run()) >= FAN_OUT_BACKLOG
          fannedOut = true
        }
        const claimed = this.#stopping ? 0 : await this.#claim()
        // Straight on only when this round found more to do; a backlog whose fan-out waits for
        // the load to pass is not a reason to spin (each round is a write transaction).
        more = (fannedOut && backlog) || claimed >= this.#claimBatch
      } catch (error) {
        this.options.log.warn({ err: error }, 'webhook worker round failed; trying again')
      }
      if (!more && !this.#stopping) await this.#idle()
    }
  }

  /** Waits for the poll interval, or less when a send finishes (there may be more to claim). */
  #idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#pollMs)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.#wake = done
    })
  }

  /** Claims what this instance has room for; how many it claimed. */
  async #claim(): Promise<number> {
    const room = Math.min(
      this.#maxInFlight - this.#inFlight - this.#queuedCount(),
      this.#share?.available() ?? Number.POSITIVE_INFINITY,
    )
    if (room <= 0 || this.#stopping) return 0
    const now = this.options.clock.now()
    const full = [...this.#busy].filter(([, n]) => n >= this.options.concurrencyPerEndpoint).map(([id]) => id)
    // With busy endpoints left out, the query walks past all their due rows (a backlog of
    // thousands) to find another endpoint's: after such a walk found nothing, the next waits for
    // the poll interval instead of following every finished send.
    if (full.length > 0 && performance.now() - this.#emptyExcludingClaimAt < this.#pollMs) return 0
    // One transaction: the rows stay locked from the choice to the update.
    const claimed = await this.options.db.transaction().execute((trx) =>
      repo.claimDue(trx, {
        now: new Date(now).toISOString(),
        lockedUntil: new Date(now + this.#leaseMs).toISOString(),
        limit: room,
        excludeEndpoints: full,
      }),
    )
    if (claimed.length === 0) {
      if (full.length > 0) this.#emptyExcludingClaimAt = performance.now()
      return 0
    }
    this.#share?.take(claimed.length)
    const endpoints = new Map(
      (await repo.endpointsByIds(this.options.db, [...new Set(claimed.map((d) => d.endpoint_id))])).map(
        (e) => [e.id, e],
      ),
    )
    for (const delivery of claimed) {
      const endpoint = endpoints.get(delivery.endpoint_id)
      if (endpoint === undefined) continue // deleted meanwhile: its deliveries went with it
      const queue = this.#queued.get(endpoint.id) ?? []
      queue.push({ delivery, endpoint })
      this.#queued.set(endpoint.id, queue)
    }
    this.#pump()
    return claimed.length
  }

  #queuedCount(): number {
    let n = 0
    for (const q of this.#queued.values()) n += q.length
    return n
  }

  /**
   * Starts queued sends while their endpoint has room. A delivery that waited so long that its
   * claim could lapse during the send is given back instead: another worker could then take it
   * while this one still sends it.
   */
  #pump(): void {
    const latestStart = this.options.clock.now() + this.options.timeoutMs + 2_000
    const expired: string[] = []
    for (const [endpointId, queue] of this.#queued) {
      while (queue.length > 0 && (this.#busy.get(endpointId) ?? 0) < this.options.concurrencyPerEndpoint) {
        const next = queue.shift()!
        if (Date.parse(next.delivery.locked_until ?? '') < latestStart) {
          expired.push(next.delivery.id)
          continue
        }
        this.#busy.set(endpointId, (this.#busy.get(endpointId) ?? 0) + 1)
        this.#inFlight++
        const send: Promise<void> = this.#deliver(next.delivery, next.endpoint)
          .catch((error: unknown) =>
            this.options.log.warn(
              { err: error, delivery: next.delivery.id },
              'webhook delivery could not be recorded',
            ),
          )
          .finally(() => {
            this.#sends.delete(send)
            this.#inFlight--
            this.#busy.set(endpointId, (this.#busy.get(endpointId) ?? 1) - 1)
            this.#pump()
            if (this.#maxInFlight - this.#inFlight - this.#queuedCount() >= this.#claimBatch) this.#wake?.()
          })
        this.#sends.add(send)
      }
      if (queue.length === 0) this.#queued.delete(endpointId)
    }
    if (expired.length > 0) {
      repo
        .releaseDeliveries(this.options.db, expired)
        .catch((error: unknown) =>
          this.options.log.warn({ err: error }, 'could not release webhook deliveries'),
        )
    }
  }

  async #deliver(delivery: repo.DeliveryRow, endpoint: EndpointRow): Promise<void> {
    const { clock, box, timeoutMs } = this.options
    const started = clock.now()
    let result: SendResult
    try {
      // Checked again now (DNS may have changed since the endpoint was saved), and the send
      // connects to the address checked here.
      const target = await vetUrl(endpoint.url, {
        insecure: this.options.insecure,
        resolve: this.options.resolve,
      })
      const headers = signedHeaders(
        signingSecrets(box, endpoint, started),
        delivery.event_id,
        Math.floor(started / 1000),
        delivery.payload,
      )
      const send = (pools?: ConnectionPools) =>
        sendWebhook(target, headers, delivery.payload, {
          timeoutMs,
          userAgent: this.options.userAgent ?? 'pet-service-webhooks/1',
          ...(pools === undefined ? {} : { pools }),
        })
      result = await send(this.#pools)
      // The receiver closed a kept-alive connection as it was reused: once more, on a new one.
      if (result.staleConnection === true) result = await send()
    } catch (error) {
      if (!(error instanceof UrlRefused)) throw error
      result = { status: null, bodyExcerpt: null, error: error.message, latencyMs: 0 }
    }
    await this.#record(delivery, endpoint, started, result)
  }

  async #record(
    delivery: repo.DeliveryRow,
    endpoint: EndpointRow,
    started: number,
    result: SendResult,
  ): Promise<void> {
    const { clock, db, disableAfterDays } = this.options
    const now = clock.now()
    const attempt = delivery.attempts + 1
    const ok = result.status !== null && result.status >= 200 && result.status < 300
    const next = ok ? null : nextAttemptAt(attempt, Date.parse(delivery.created_at), now, this.options.random)
    const status = ok ? 'succeeded' : next === null ? 'failed' : 'retrying'
    const nextIso = next === null ? null : new Date(next).toISOString()
    const nowIso = new Date(now).toISOString()
    const error =
      result.error ??
      (ok ? null : `The endpoint answered ${result.status}; any 2xx status counts as delivered.`)
    await db.transaction().execute(async (trx) => {
      await repo.insertAttempt(trx, {
        id: newId('wd'),
        delivery_id: delivery.id,
        endpoint_id: delivery.endpoint_id,
        account_id: delivery.account_id,
        event_id: delivery.event_id,
        event_type: delivery.event_type,
        attempt,
        status,
        attempted_at: new Date(started).toISOString(),
        response_status: result.status,
        latency_ms: result.latencyMs,
        response_body_excerpt: result.bodyExcerpt,
        error,
        next_attempt_at: nextIso,
      })
      await repo.updateDelivery(trx, delivery.id, {
        status,
        attempts: attempt,
        next_attempt_at: nextIso,
        locked_until: null,
        updated_at: nowIso,
      })
      if (ok) {
        if (endpoint.failing_since !== null) await repo.endpointSucceeded(trx, endpoint.id)
      } else {
        const disabled = await repo.endpointFailed(trx, endpoint.id, {
          now: nowIso,
          failingBefore: new Date(now - disableAfterDays * DAY_MS).toISOString(),
          reason: `Disabled after ${disableAfterDays} days in which every delivery failed (last: ${error}). Fix the endpoint, then enable it again.`,
          updatedAt: nowIso,
        })
        if (disabled)
          this.options.log.warn({ endpoint: endpoint.id }, 'webhook endpoint disabled for failing')
        // Disabled now, or while this send was under way (by this failure run, another send's,
        // or its holder): the retry just scheduled waits with the rest (holdDeliveries).
        const [current] = await repo.endpointsByIds(trx, [endpoint.id])
        if (current?.status === 'disabled') await repo.holdDeliveries(trx, endpoint.id)
      }
    })
  }
}
