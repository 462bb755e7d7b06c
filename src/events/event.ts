import type { Static } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { EventsTable } from '../db/schema.ts'
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

export type EventRow = Selectable<EventsTable>

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
