import { setTimeout as sleep } from 'node:timers/promises'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { Db } from '../db/schema.ts'
import type { Clock } from './clock.ts'
import { deliveryBacklog } from './webhooks-service.ts'

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed'

/** What the delivery worker reports of each attempt (the metrics below, or nothing). */
export interface DeliveryObserver {
  /** An attempt ended: its outcome, the endpoint's time, and, once delivered, the time since its event. */
  attempted(outcome: AttemptOutcome, seconds: number, lagSeconds: number | undefined): void
}

/** Endpoints looked at for the oldest due delivery (as many as a claim looks at). */
const BACKLOG_ENDPOINTS = 1_000

/**
 * How long a scrape waits for the backlog's figures. When every pooled connection is busy the
 * read queues behind the requests; the scrape answers with the last figures instead of waiting
 * for a connection (up to DB_CONNECT_TIMEOUT_SECONDS), and the read goes on for the next one.
 */
const SCRAPE_WAIT_MS = 2_000

/**
 * The webhooks' Prometheus metrics: attempts by outcome, the endpoints' answer times, the lag from
 * an event to its delivery, and the backlog. The backlog is read from the database at each scrape
 * (the same figures on every instance, so a cluster's primary keeps the largest, not the sum); a
 * scrape while the database does not answer at once leaves the last figures.
 */
export function registerWebhookMetrics(registry: Registry, db: Db, clock: Clock): DeliveryObserver {
  const attempts = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: succeeded (a 2xx in time), retrying (failed; tried again later), failed (failed; given up).',
    labelNames: ['outcome'],
    registers: [registry],
  })
  for (const outcome of ['succeeded', 'retrying', 'failed'] as const) attempts.inc({ outcome }, 0)
  const duration = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook delivery to its answer (or its failure, the timeout at most).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  })
  const lag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'Time from an event to its delivery to an endpoint (a 2xx), the waits and retries in between included.',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600, 3 * 24 * 3600],
    registers: [registry],
  })

  // A scrape collects every gauge at once: they share one look while it is under way.
  let reading: Promise<Awaited<ReturnType<typeof deliveryBacklog>> | undefined> | undefined
  const backlog = () => {
    reading ??= deliveryBacklog(db, BACKLOG_ENDPOINTS)
      .catch(() => undefined)
      .finally(() => {
        reading = undefined
      })
    return Promise.race([reading, sleep(SCRAPE_WAIT_MS, undefined, { ref: false })])
  }
  new Gauge({
    name: 'webhook_deliveries_open',
    help: 'Webhook deliveries waiting to be sent or sent again (pending or retrying), all accounts together.',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const figures = await backlog()
      if (figures !== undefined) this.set(figures.open)
    },
  })
  new Gauge({
    name: 'webhook_delivery_oldest_due_seconds',
    help: 'How long the longest-waiting due delivery of an enabled endpoint has been due (0 when none is).',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const figures = await backlog()
      if (figures === undefined) return
      const due = figures.oldestDueAt === null ? 0 : (clock.now() - Date.parse(figures.oldestDueAt)) / 1000
      this.set(Math.max(0, due))
    },
  })
  new Gauge({
    name: 'webhook_events_waiting_fan_out',
    help: 'Events written and not yet turned into deliveries (an estimate, by sequence number).',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const figures = await backlog()
      if (figures !== undefined) this.set(figures.eventsWaiting)
    },
  })

  return {
    attempted(outcome, seconds, lagSeconds) {
      attempts.inc({ outcome })
      duration.observe(seconds)
      if (lagSeconds !== undefined) lag.observe(Math.max(0, lagSeconds))
    },
  }
}
