import type { Static } from '@sinclair/typebox'
import type { Insertable, Selectable } from 'kysely'
import type { EventsTable } from '../db/schema.ts'
import { newTimeOrderedId } from '../lib/ids.ts'
import type { EventV1Schema } from './event-schemas.ts'

/** Every event type the service records; `*.updated` events carry `previous_attributes`. */
export const EVENT_TYPES = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'user.created',
  'user.updated',
  'user.deleted',
  'order.created',
  'order.updated',
  'order.deleted',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** What the events API's filter and a webhook subscription may name besides `*` and a type: `pet.*`. */
export const EVENT_WILDCARDS = [...new Set(EVENT_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))]

export type EventRow = Selectable<EventsTable>

/** An event row to insert (its `seq` is the database's). */
export type NewEventRow = Omit<Insertable<EventsTable>, 'seq'>

/** What a change records: `object` as v1 shows it after the change (before it, for deletions). */
export interface EventToRecord {
  accountId: string
  type: EventType
  objectId: string
  object: unknown
  previousAttributes?: Record<string, unknown>
  at: string
}

/**
 * The row an event is stored as: the one place event rows are built, whether recordEvent
 * inserts it or a repository folds its insert into the change's own statement (the pets
 * repository's insertPetWithEvent).
 */
export function newEventRow(event: EventToRecord): NewEventRow {
  return {
    id: newTimeOrderedId('evt'),
    account_id: event.accountId,
    type: event.type,
    object_id: event.objectId,
    data: JSON.stringify(event.object),
    previous_attributes:
      event.previousAttributes === undefined ? null : JSON.stringify(event.previousAttributes),
    created_at: event.at,
  }
}

/** An event as v1 shows it: the events API, the stream's `data:` and the webhook payload. */
export type EventV1 = Static<typeof EventV1Schema>

/**
 * The v1 shape of a stored event. `data` is the object as v1 showed it when the change was
 * made (before it, for deletions), stored as JSON in the same transaction as the change.
 */
export function toEventV1(row: EventRow): EventV1 {
  const data: EventV1['data'] = { object: JSON.parse(row.data) as Record<string, unknown> }
  if (row.type.endsWith('.updated')) {
    data.previous_attributes =
      row.previous_attributes === null ? {} : (JSON.parse(row.previous_attributes) as Record<string, unknown>)
  }
  return { id: row.id, object: 'event', type: row.type, created_at: row.created_at, data }
}
