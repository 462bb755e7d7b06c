import { Type } from '@sinclair/typebox'
import { IdCursor, ListOf, ListQuery } from '../schemas/list.ts'
import { EVENT_TYPES } from './event.ts'

const AnyObject = Type.Object({}, { additionalProperties: true })

export const EventV1Schema = Type.Object(
  {
    id: Type.String({ examples: ['evt_0GZr7bXk9QqT2mV8wLp4'] }),
    object: Type.Literal('event'),
    type: Type.String({ examples: ['pet.updated'], description: `One of ${EVENT_TYPES.join(', ')}.` }),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Object({
      object: Type.Unsafe<Record<string, unknown>>({
        ...AnyObject,
        description: 'The object as v1 shows it, after the change (before it, for deletions).',
      }),
      previous_attributes: Type.Optional(
        Type.Unsafe<Record<string, unknown>>({
          ...AnyObject,
          description: 'On `*.updated` only: the earlier values of the attributes that changed.',
        }),
      ),
    }),
  },
  { description: 'Something that happened in your account, such as a pet created or updated.' },
)

export const EventIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The event id (evt_…).' }),
})

/** The filters shared by the list and the stream. */
export const EventFilterQuery = {
  type: Type.Optional(
    Type.Array(Type.String({ maxLength: 500 }), {
      maxItems: 20,
      description:
        'Event types: exact (`pet.created`), a family wildcard (`pet.*`), or `*`. Repeat the parameter or separate types with commas.',
    }),
  ),
  object_id: Type.Optional(
    Type.String({ maxLength: 64, description: 'Only events about this object (a pet or user id).' }),
  ),
  'created[gte]': Type.Optional(
    Type.String({
      maxLength: 40,
      description: 'Created at or after: ISO 8601 with a time zone, or Unix seconds.',
    }),
  ),
  'created[lte]': Type.Optional(
    Type.String({
      maxLength: 40,
      description: 'Created at or before: ISO 8601 with a time zone, or Unix seconds.',
    }),
  ),
}

export const ListEventsQuery = ListQuery(
  {
    starting_after: IdCursor('Last event id of the previous page.'),
    ending_before: IdCursor('First event id of the current page.'),
  },
  EventFilterQuery,
)

export const StreamEventsQuery = Type.Object(
  {
    last_event_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Replay the events after this one first (as the `Last-Event-ID` header does).',
      }),
    ),
    ...EventFilterQuery,
  },
  { additionalProperties: false },
)

export const EventListSchema = ListOf(EventV1Schema)
