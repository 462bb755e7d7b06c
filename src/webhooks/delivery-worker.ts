import type { Db } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import type { Clock } from './clock.ts'
import { CpuShare } from './cpu-share.ts'
import { shareClaims } from './fair-share.ts'
import { FanOut } from './fan-out.ts'
import { nextAttemptAt } from './retry-schedule.ts'
import type { SecretBox } from './secret-box.ts'
import { ConnectionPools, type SendResult, sendWebhook } from './sender.ts'
import { signedHeaders } from './signing.ts'
import { type Resolve, UrlRefused, vetUrl } from './url-policy.ts'
import type { EndpointRow } from './webhook-endpoint.ts'
import type { DeliveryObserver } from './webhook-metrics.ts'
import * as repo from './webhooks-repository.ts'
import { signingSecrets } from './webhooks-service.ts'

/** Where the worker reports what went wrong (the app's logger fits). */
export interface WorkerLog {
  warn(details: object, message: string): void
}

export interface DeliveryWorkerOptions {
  db: Db
  box: SecretBox
  clock: Clock
  resolve: Resolve
  insecure: boolean
  timeoutMs: number
  concurrencyPerEndpoint: number
  /** Deliveries this instance sends at once for one account, all its endpoints together. */
  concurrencyPerAccount: number
  disableAfterDays: number
  log: WorkerLog
  /** Requests this process has received so far: the worker yields to them (see CpuShare). */
  requestsReceived?: () => number
  /** How the worker yields to requests (default: a CpuShare over requestsReceived). */
  cpuShare?: CpuShare
  /** How long the worker idles when there is nothing to do (new events are found by polling). */
  pollMs?: number
  /** Deliveries sent at once by this instance, all endpoints together. */
  maxInFlight?: number
  userAgent?: string
  random?: () => number
  /** Told of each attempt (the webhooks' metrics, webhook-metrics.ts). */
  observer?: DeliveryObserver
}

const DAY_MS = 24 * 60 * 60 * 1000
/** A fan-out round that read this many events likely left more behind. */
/** Events a fan-out round reads at most; a round that read this many likely left more behind. */
const FAN_OUT_BATCH = 1000
/** The same while requests saturate the process: small rounds, so the one writer stays free. */
const SATURATED_FAN_OUT_BATCH = 100
/** Endpoints with open deliveries looked at per claim (the next claim goes on from the last one). */
const ENDPOINTS_PER_SCAN = 1_000

/**
 * The webhooks worker: fans new events out into deliveries, claims due deliveries from the
 * database (several instances share them; a claim is a lease, so a crashed instance's claims
 * come back once they lapse), shared fairly between accounts and endpoints (fair-share.ts),
 * sends them with bounded concurrency per endpoint and per account, and records each attempt: any 2xx within the timeout succeeds, anything else is retried on the schedule of
 * src/webhooks/retry-schedule.ts, then marked failed. Never on a request's path: creates only
 * insert their event.
 */
export class DeliveryWorker {
  readonly #fanOut: FanOut
  readonly #pollMs: number
  readonly #maxInFlight: number
  readonly #leaseMs: number
  /** In-flight sends per endpoint id, and per account id. */
  readonly #busy = new Map<string, number>()
  readonly #busyAccounts = new Map<string, number>()
  /**
   * Claimed deliveries waiting for a place (their endpoint's or account's): a claim takes up to
   * one more round of sends per endpoint than it can start, so that a busy endpoint is not
   * claimed for again after every send.
   */
  readonly #queued = new Map<string, { delivery: repo.DeliveryRow; endpoint: EndpointRow }[]>()
  readonly #sends = new Set<Promise<void>>()
  #inFlight = 0
  readonly #pools = new ConnectionPools()
  /** Unset in runOnce (tests): everything due is sent. */
  #share: CpuShare | undefined
  /** Claims are made in batches of at least this many (each claim is a query and a write). */
  readonly #claimBatch: number
  /** Where the next claim's look at the endpoints goes on from (see ENDPOINTS_PER_SCAN). */
  #scanAfter = ''
  /** Whether the last claim found all that was due to the endpoints it could send to. */
  #ranDry = true
  #stopping = false
  #loop: Promise<void> | undefined
  #wake: (() => void) | undefined

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.#fanOut = new FanOut(options.db, options.clock)
    this.#pollMs = options.pollMs ?? 250
    this.#maxInFlight = options.maxInFlight ?? 32
    this.#claimBatch = Math.max(1, Math.floor(this.#maxInFlight / 2))
    // A send starts only while its claim has at least a timeout and a margin left (see #pump),
    // so no send outlives its claim; a crashed instance's claims come back this soon.
    this.#leaseMs = 2 * options.timeoutMs + 5_000
  }

  start(): void {
    this.#share ??=
      this.options.cpuShare ??
      new CpuShare({ windowMs: this.#pollMs, requests: this.options.requestsReceived ?? (() => 0) })
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
    while ((await this.#fanOut.run(FAN_OUT_BATCH)) > 0) {}
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
        // on every wake-up: each look is a write transaction. While requests saturate the
        // process, only once what is due has all been claimed, and in small rounds: the floor's
        // deliveries need no more, and the one writer (SQLite) stays with the requests.
        const saturated = this.#share?.saturated() ?? false
        const interval = performance.now() - lastFanOut >= this.#pollMs
        let fannedOut = false
        if (saturated ? interval && this.#ranDry : backlog || interval) {
          lastFanOut = performance.now()
          const batch = saturated ? SATURATED_FAN_OUT_BATCH : FAN_OUT_BATCH
          backlog = (await this.#fanOut.run(batch)) >= batch
          fannedOut = true
        }
        const claimed = this.#stopping ? 0 : await this.#claim()
        // Straight on only when this round found more to do; a backlog whose fan-out waits for
        // the load to pass is not a reason to spin (each round is a write transaction).
        more = (fannedOut && backlog && !saturated) || claimed >= this.#claimBatch
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

  /** Claims what this instance has room for, shared between accounts; how many it claimed. */
  async #claim(): Promise<number> {
    const room = Math.min(
      this.#maxInFlight - this.#inFlight,
      this.#share?.available() ?? Number.POSITIVE_INFINITY,
    )
    if (room <= 0 || this.#stopping) return 0
    const now = this.options.clock.now()
    const nowIso = new Date(now).toISOString()
    const due = await repo.endpointsWithOpenDeliveries(this.options.db, {
      after: this.#scanAfter,
      limit: ENDPOINTS_PER_SCAN,
    })
    this.#scanAfter = due.length < ENDPOINTS_PER_SCAN ? '' : due.at(-1)!.endpointId
    const places = shareClaims(due, nowIso, {
      room,
      perEndpoint: this.options.concurrencyPerEndpoint,
      perAccount: this.options.concurrencyPerAccount,
      busyEndpoints: this.#busy,
      busyAccounts: this.#busyAccounts,
    })
    if (places.size === 0) {
      // Nothing due, or only for endpoints and accounts at their bounds.
      this.#ranDry = !due.some((e) => e.dueAt !== null && e.dueAt <= nowIso)
      return 0
    }
    // Each endpoint dealt a place is claimed for a round more than it starts now, from the room
    // no endpoint was dealt (so never past what the CPU share allows).
    let spare = room
    for (const n of places.values()) spare -= n
    const limits = new Map<string, number>()
    for (const [endpointId, n] of places) {
      const waiting = this.#queued.get(endpointId)?.length ?? 0
      const ahead = Math.min(spare, Math.max(0, this.options.concurrencyPerEndpoint - waiting))
      spare -= ahead
      limits.set(endpointId, n + ahead)
    }
    // One transaction: the rows stay locked from the choice to the update.
    const claimed = await this.options.db.transaction().execute(async (trx) => {
      const rows: repo.DeliveryRow[] = []
      for (const [endpointId, limit] of limits) {
        rows.push(
          ...(await repo.claimDue(trx, {
            endpointId,
            now: nowIso,
            lockedUntil: new Date(now + this.#leaseMs).toISOString(),
            limit,
          })),
        )
      }
      return rows
    })
    // Fewer than asked: the endpoints had no more due (the fan-out may bring more).
    let asked = 0
    for (const limit of limits.values()) asked += limit
    this.#ranDry = claimed.length < asked
    if (claimed.length === 0) return 0
    this.#share?.take(claimed.length)
    const endpoints = new Map(
      (await repo.endpointsByIds(this.options.db, [...places.keys()])).map((e) => [e.id, e]),
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

  #hasPlace(endpointId: string, accountId: string): boolean {
    return (
      this.#inFlight < this.#maxInFlight &&
      (this.#busy.get(endpointId) ?? 0) < this.options.concurrencyPerEndpoint &&
      (this.#busyAccounts.get(accountId) ?? 0) < this.options.concurrencyPerAccount
    )
  }

  /**
   * Starts queued sends while their endpoint and account have a place. A delivery that waited so
   * long that its claim could lapse during the send is given back instead: another worker could
   * then take it while this one still sends it.
   */
  #pump(): void {
    const latestStart = this.options.clock.now() + this.options.timeoutMs + 2_000
    const expired: string[] = []
    for (const [endpointId, queue] of this.#queued) {
      while (queue.length > 0 && this.#hasPlace(endpointId, queue[0]!.delivery.account_id)) {
        const next = queue.shift()!
        if (Date.parse(next.delivery.locked_until ?? '') < latestStart) {
          expired.push(next.delivery.id)
          continue
        }
        this.#start(next.delivery, next.endpoint)
      }
      if (queue.length === 0) this.#queued.delete(endpointId)
    }
    for (const queue of this.#queued.values()) {
      while (queue.length > 0 && Date.parse(queue[0]!.delivery.locked_until ?? '') < latestStart) {
        expired.push(queue.shift()!.delivery.id)
      }
    }
    if (expired.length > 0) {
      repo
        .releaseDeliveries(this.options.db, expired)
        .catch((error: unknown) =>
          this.options.log.warn({ err: error }, 'could not release webhook deliveries'),
        )
    }
  }

  #start(delivery: repo.DeliveryRow, endpoint: EndpointRow): void {
    const accountId = delivery.account_id
    const add = (map: Map<string, number>, id: string, n: number) => {
      const value = (map.get(id) ?? 0) + n
      if (value === 0) map.delete(id)
      else map.set(id, value)
    }
    add(this.#busy, endpoint.id, 1)
    add(this.#busyAccounts, accountId, 1)
    this.#inFlight++
    const send: Promise<void> = this.#deliver(delivery, endpoint)
      .catch((error: unknown) =>
        this.options.log.warn(
          { err: error, delivery: delivery.id },
          'webhook delivery could not be recorded',
        ),
      )
      .finally(() => {
        this.#sends.delete(send)
        this.#inFlight--
        add(this.#busy, endpoint.id, -1)
        add(this.#busyAccounts, accountId, -1)
        this.#pump()
        // Its endpoint may have more due, or another account may be waiting for the place.
        if (!this.#queued.has(endpoint.id)) this.#wake?.()
      })
    this.#sends.add(send)
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
    this.#share?.done()
    this.options.observer?.attempted(status, result.latencyMs / 1000, ok ? lagOf(delivery, now) : undefined)
  }
}

/**
 * Seconds from the delivery's event to `now`: the payload's first `created_at` is the event's
 * (event-payload.ts writes it before `data`), found without parsing the body.
 */
function lagOf(delivery: repo.DeliveryRow, now: number): number | undefined {
  const createdAt = /"created_at":"([^"]*)"/.exec(delivery.payload)?.[1]
  return createdAt === undefined ? undefined : (now - Date.parse(createdAt)) / 1000
}
