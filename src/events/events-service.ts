import type { Db } from '../db/schema.ts'
import { newTimeOrderedId } from '../lib/ids.ts'
import { insertEvent } from './events-repository.ts'

export type EventType =
  | 'pet.created'
  | 'pet.updated'
  | 'pet.deleted'
  | 'user.created'
  | 'user.updated'
  | 'user.deleted'

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
  await insertEvent(db, {
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
