import type { Db } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import type { Clock } from './clock.ts'
import { eventPayload } from './event-payload.ts'
import { type EndpointRow, subscribes } from './webhook-endpoint.ts'
import * as repo from './webhooks-repository.ts'

const CURSOR = 'fan_out'
const BATCH = 1000
/** A hole in `seq` wider than this is not waited for (no transaction holds that many events). */
const MAX_TRACKED_GAP = 1000

/**
 * Turns new events (by `seq`) into deliveries for the enabled endpoints that subscribe to them,
 * in one transaction with the cursor that records how far it got: a crash before the commit
 * leaves both as they were, and the next round does the same work again (a repeated fan-out
 * inserts nothing, the deliveries' dedupe_key being unique).
 *
 * On PostgreSQL a `seq` is taken when a transaction inserts its event, so a transaction that
 * commits later than one with a higher `seq` leaves a hole for a while. A hole is remembered and
 * read again on later rounds; the cursor stays before it until its event appears or the hole is
 * older than `gapGraceMs` (a rolled-back transaction's number, never filled). SQLite commits
 * transactions one at a time, so a hole there is final at once (grace 0).
 */
export class FanOut {
  /** Highest seq read (valid while the cursor is the one this instance last wrote). */
  #scannedTo = -1
  #lastCursor = -1
  /** seq -> when the hole was first seen. */
  #gaps = new Map<number, number>()

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly gapGraceMs: number,
  ) {}

  /** One round; how many events it read. */
  async run(): Promise<number> {
    // Nothing new since the last round (a read, off the writer): no transaction.
    if (this.#gaps.size === 0 && this.#scannedTo >= 0 && (await repo.maxEventSeq(this.db)) <= this.#scannedTo)
      return 0
    const outcome = await this.db.transaction().execute(async (trx) => {
      const cursor = await repo.lockCursor(trx, CURSOR)
      if (cursor === undefined) return undefined
      let scannedTo = this.#scannedTo
      let gaps = this.#gaps
      if (cursor !== this.#lastCursor || scannedTo < cursor) {
        // Another instance moved the cursor, or this is the first round: start from it.
        scannedTo = cursor
        gaps = new Map()
      } else {
        gaps = new Map(gaps)
      }
      const events = await repo.eventsAfter(trx, scannedTo, [...gaps.keys()], BATCH)
      const now = this.clock.now()
      for (const event of events) gaps.delete(event.seq)
      for (const event of events) {
        if (event.seq <= scannedTo) continue
        if (event.seq - scannedTo - 1 <= MAX_TRACKED_GAP) {
          for (let missing = scannedTo + 1; missing < event.seq; missing++) gaps.set(missing, now)
        }
        scannedTo = event.seq
      }
      for (const [seq, seen] of gaps) if (now - seen >= this.gapGraceMs) gaps.delete(seq)

      await repo.insertDeliveries(trx, await this.deliveriesFor(trx, events, now))
      const newCursor = gaps.size === 0 ? scannedTo : Math.min(...gaps.keys()) - 1
      if (newCursor !== cursor) await repo.saveCursor(trx, CURSOR, newCursor, new Date(now).toISOString())
      return { scannedTo, gaps, newCursor, read: events.length }
    })
    if (outcome === undefined) return 0
    this.#scannedTo = outcome.scannedTo
    this.#gaps = outcome.gaps
    this.#lastCursor = outcome.newCursor
    return outcome.read
  }

  private async deliveriesFor(
    db: Db,
    events: repo.EventRowForDelivery[],
    now: number,
  ): Promise<repo.NewDelivery[]> {
    if (events.length === 0) return []
    const endpoints = await repo.enabledEndpointsOf(db, [...new Set(events.map((e) => e.account_id))])
    if (endpoints.length === 0) return []
    const byAccount = new Map<string, { row: EndpointRow; events: string[] }[]>()
    for (const row of endpoints) {
      const list = byAccount.get(row.account_id) ?? []
      list.push({ row, events: JSON.parse(row.enabled_events) as string[] })
      byAccount.set(row.account_id, list)
    }
    const at = new Date(now).toISOString()
    const out: repo.NewDelivery[] = []
    for (const event of events) {
      let payload: string | undefined
      for (const endpoint of byAccount.get(event.account_id) ?? []) {
        // An endpoint receives the events that happened after it was created.
        if (event.created_at < endpoint.row.created_at || !subscribes(endpoint.events, event.type)) continue
        payload ??= eventPayload(event)
        out.push({
          id: newId('dlv'),
          endpoint_id: endpoint.row.id,
          account_id: event.account_id,
          event_id: event.id,
          event_seq: event.seq,
          event_type: event.type,
          object_id: event.object_id,
          payload,
          dedupe_key: `${endpoint.row.id}:${event.id}`,
          status: 'pending',
          attempts: 0,
          next_attempt_at: at,
          locked_until: null,
          created_at: at,
          updated_at: at,
        })
      }
    }
    return out
  }
}
