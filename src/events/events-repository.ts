import type { Insertable } from 'kysely'
import { prepareQuery } from '../db/prepared-query.ts'
import type { Db, EventsTable } from '../db/schema.ts'
import { newTimeOrderedId } from '../lib/ids.ts'

export type EventType =
  | 'pet.created'
  | 'pet.updated'
  | 'pet.deleted'
  | 'user.created'
  | 'user.updated'
  | 'user.deleted'

type NewEventRow = Omit<Insertable<EventsTable>, 'seq'>

const insertEventQuery = prepareQuery<NewEventRow, unknown>((db, p) =>
  db.insertInto('events').values({
    id: p('id'),
    account_id: p('account_id'),
    type: p('type'),
    object_id: p('object_id'),
    data: p('data'),
    previous_attributes: p('previous_attributes'),
    created_at: p('created_at'),
  }),
)

/**
 * Appends an event (the transactional outbox pattern). Callers pass the transaction that makes the
 * change, so the event exists exactly when the change does.
 */
export async function recordEvent(
  db: Db,
  event: {
    accountId: string
    type: EventType
    objectId: string
    object: unknown
    previousAttributes?: Record<string, unknown>
    at: string
  },
): Promise<void> {
  await insertEventQuery.execute(db, {
    id: newTimeOrderedId('evt'),
    account_id: event.accountId,
    type: event.type,
    object_id: event.objectId,
    data: JSON.stringify(event.object),
    previous_attributes:
      event.previousAttributes === undefined ? null : JSON.stringify(event.previousAttributes),
    created_at: event.at,
  })
}
