import { isPostgres } from '../db/dialect.ts'
import type { Db } from '../db/schema.ts'
import {
  type EventRow,
  eventsAfter,
  eventsWithSeq,
  lastEventSeq,
  openEventWriters,
  SeqHoles,
} from '../events/events-service.ts'
import { newId } from '../lib/ids.ts'
import type { Clock } from './clock.ts'
import { eventPayload } from './event-payload.ts'
import { type EndpointRow, subscribes } from './webhook-endpoint.ts'
import * as repo from './webhooks-repository.ts'

/**
 * Turns new events (by `seq`) into deliveries for the enabled endpoints that subscribe to them,
 * in one transaction with the cursor that records how far it got: a crash before the commit
 * leaves both as they were, and the next round does the same work again (a repeated fan-out
 * inserts nothing, the deliveries' dedupe_key being unique).
 *
 * On PostgreSQL a transaction that commits later than one with a higher `seq` leaves a hole for
 * a while. The cursor stays before a hole until its event is read or its number is known never
 * to come (SeqHoles: its transaction has ended), however long that takes; later events are fanned
 * out meanwhile (the order per object is the claim's, by event_seq).
 */
export class FanOut {
  /** Highest seq read (valid while the cursor is the one this instance last wrote). */
  #scannedTo = -1
  #lastCursor = -1
  #holes: SeqHoles

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.#holes = new SeqHoles(!isPostgres(db))
  }

  /** One round of at most `batch` new events; how many events it read. */
  async run(batch: number): Promise<number> {
    // Nothing new since the last round (a read, off the writer): no transaction.
    if (this.#holes.size === 0 && this.#scannedTo >= 0 && (await lastEventSeq(this.db)) <= this.#scannedTo)
      return 0
    const outcome = await this.db.transaction().execute(async (trx) => {
      const cursor = await repo.lockCursor(trx, repo.FAN_OUT_CURSOR)
      if (cursor === undefined) return undefined
      let scannedTo = this.#scannedTo
      let holes: SeqHoles
      if (cursor !== this.#lastCursor || scannedTo < cursor) {
        // Another instance moved the cursor, or this is the first round: start from it (every
        // number up to it is settled).
        scannedTo = cursor
        holes = new SeqHoles(!isPostgres(this.db))
      } else {
        holes = this.#holes.clone()
      }
      holes.narrow(await openEventWriters(trx))
      // The new events, and those numbered earlier that were being waited for (the holes).
      const newer = await eventsAfter(trx, scannedTo, batch)
      const events = [...(await eventsWithSeq(trx, holes.seqs())), ...newer]
      holes.resolve(events.filter((e) => e.seq <= scannedTo).map((e) => e.seq))
      holes.note(
        scannedTo,
        newer.map((e) => e.seq),
      )
      scannedTo = newer.at(-1)?.seq ?? scannedTo
      const now = this.clock.now()
      await repo.insertDeliveries(trx, await this.deliveriesFor(trx, events, now))
      const newCursor = Math.min((holes.lowest() ?? Number.POSITIVE_INFINITY) - 1, scannedTo)
      if (newCursor !== cursor)
        await repo.saveCursor(trx, repo.FAN_OUT_CURSOR, newCursor, new Date(now).toISOString())
      return { scannedTo, holes, newCursor, read: events.length }
    })
    if (outcome === undefined) return 0
    this.#scannedTo = outcome.scannedTo
    this.#holes = outcome.holes
    this.#lastCursor = outcome.newCursor
    return outcome.read
  }

  private async deliveriesFor(db: Db, events: EventRow[], now: number): Promise<repo.NewDelivery[]> {
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
