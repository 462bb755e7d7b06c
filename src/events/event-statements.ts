import { sql } from 'kysely'
import type { NewEventRow } from './event.ts'

/**
 * The events SQL that another feature's one-statement change on PostgreSQL embeds (the pets'
 * writes, src/pets/pet-writes.ts), as src/idempotency/key-claim-statement.ts is the key claim's:
 * the change and its event are one WITH, so the event exists exactly when the change does.
 * Elsewhere an event is inserted on its own in the change's transaction (events-service.ts,
 * recordEvent); both take the row newEventRow builds.
 */

/** The event row of a one-statement change, as that statement's parameters. */
export interface EventArgs {
  event_id: string
  event_account_id: string
  event_type: string
  event_object_id: string
  event_data: string
  event_previous_attributes: string | null
  event_created_at: string
}

export function eventArgs(event: NewEventRow): EventArgs {
  return {
    event_id: event.id,
    event_account_id: event.account_id,
    event_type: event.type,
    event_object_id: event.object_id,
    event_data: event.data,
    event_previous_attributes: event.previous_attributes ?? null,
    event_created_at: event.created_at,
  }
}

/**
 * The insert of a change's event, one row per row the change's own sub-statement (`source`)
 * returned: a change that touched nothing records no event. (Raw SQL in a WITH brings its own
 * parentheses; Kysely adds them only around its builders.)
 */
export function insertEventFor(source: string, p: (name: keyof EventArgs) => unknown) {
  return sql<
    Record<string, unknown>
  >`(insert into events (id, account_id, type, object_id, data, previous_attributes, created_at)
    select ${p('event_id')}, ${p('event_account_id')}, ${p('event_type')}, ${p('event_object_id')},
      ${p('event_data')}, ${p('event_previous_attributes')}, ${p('event_created_at')}
    from ${sql.table(source)})`
}
