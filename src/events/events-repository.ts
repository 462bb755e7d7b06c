import type { Insertable } from 'kysely'
import { prepareQuery } from '../db/prepared-query.ts'
import type { Db, EventsTable } from '../db/schema.ts'

export type NewEventRow = Omit<Insertable<EventsTable>, 'seq'>

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

/** Appends an event row, in the caller's transaction (see events-service.ts). */
export async function insertEvent(db: Db, row: NewEventRow): Promise<void> {
  await insertEventQuery.execute(db, row)
}
