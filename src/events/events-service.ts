import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { type EventRow, type EventToRecord, newEventRow } from './event.ts'
import { type EventFilter, EventFilterError, parseInstant, parseTypeFilter } from './event-filter.ts'
import { type EventListQuery, findEvent, insertEvent, listEvents } from './events-repository.ts'

export type { EventRow, EventToRecord, EventType } from './event.ts'
// For the readers that follow the events in order, in this folder and in webhooks/ (seq-holes.ts,
// the webhooks' fan-out), and for a resend of one event.
export {
  eventsAfter,
  eventsWithSeq,
  findEvent,
  lastEventSeq,
  openEventWriters,
} from './events-repository.ts'
export { SeqHoles } from './seq-holes.ts'
export { newEventRow }

/**
 * Appends an event (the transactional outbox pattern). Callers pass the transaction that makes the
 * change, so the event exists exactly when the change does.
 */
export async function recordEvent(db: Db, event: EventToRecord): Promise<void> {
  await insertEvent(db, newEventRow(event))
}

/** The filter parameters of the list and the stream, as the query string carries them. */
export interface EventFilterParams {
  type?: string[]
  object_id?: string
  'created[gte]'?: string
  'created[lte]'?: string
}

/** The filter the parameters ask for; a 400 naming the parameter at fault otherwise. */
export function eventFilterFrom(params: EventFilterParams): EventFilter {
  try {
    const filter: EventFilter = {}
    const types = parseTypeFilter(params.type)
    if (types !== undefined) filter.types = types
    if (params.object_id !== undefined) filter.objectId = params.object_id
    const gte = parseInstant(params['created[gte]'], 'created[gte]')
    if (gte !== undefined) filter.createdGte = gte
    const lte = parseInstant(params['created[lte]'], 'created[lte]')
    if (lte !== undefined) filter.createdLte = lte
    return filter
  } catch (error) {
    if (error instanceof EventFilterError) {
      throw new ApiError('parameter_invalid', error.message, { param: error.param })
    }
    throw error
  }
}

export async function getEventOfAccount(db: Db, accountId: string, id: string): Promise<EventRow> {
  const event = await findEvent(db, accountId, id)
  if (event === undefined) {
    throw new ApiError(
      'event_not_found',
      `No event ${JSON.stringify(id)} in your account (events are kept for a limited time).`,
    )
  }
  return event
}

export async function listEventsOfAccount(db: Db, accountId: string, query: EventListQuery) {
  const page = await listEvents(db, accountId, query)
  if (page === undefined) {
    const cursor = query.startingAfter ?? query.endingBefore
    throw new ApiError(
      'invalid_cursor',
      `The cursor ${JSON.stringify(cursor)} is not an event of your account.`,
      { param: query.startingAfter !== undefined ? 'starting_after' : 'ending_before' },
    )
  }
  return { events: page.rows, hasMore: page.hasMore }
}

/** For a sandbox's reset. */
export { deleteAllEventsOfAccount } from './events-repository.ts'
