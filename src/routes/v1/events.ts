import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { toEventV1 } from '../../events/event.ts'
import { EventIdParams, EventListSchema, EventV1Schema, ListEventsQuery } from '../../events/event-schemas.ts'
import { eventFilterFrom, getEventOfAccount, listEventsOfAccount } from '../../events/events-service.ts'
import { assertOneCursor } from '../../http/replies.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'

const tags = ['v1-event']
const security = API_KEY_SECURITY

/** `GET /v1/event` and `GET /v1/event/{id}`: the account's events, newest first. */
export async function v1EventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps

  app.get(
    '/event',
    {
      config: { scope: 'read:events' },
      schema: {
        operationId: 'listEvents',
        summary: 'List events, newest first',
        description:
          'Events of the last `EVENTS_RETENTION_DAYS` days (30 by default). Filters combine: `type` (exact, `pet.*`, repeatable or comma-separated), `object_id`, `created[gte]`, `created[lte]`.',
        tags,
        security,
        querystring: ListEventsQuery,
        response: { 200: EventListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query
      assertOneCursor(q.starting_after, q.ending_before)
      const page = await listEventsOfAccount(db, request.principal!.accountId, {
        limit: q.limit,
        filter: eventFilterFrom(q),
        ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
        ...(q.ending_before === undefined ? {} : { endingBefore: q.ending_before }),
      })
      return {
        object: 'list' as const,
        data: page.events.map(toEventV1),
        has_more: page.hasMore,
        url: '/v1/event',
      }
    },
  )

  app.get(
    '/event/:id',
    {
      config: { scope: 'read:events' },
      schema: {
        operationId: 'getEvent',
        summary: 'Get an event',
        tags,
        security,
        params: EventIdParams,
        response: { 200: EventV1Schema, ...problemResponses(404) },
      },
    },
    async (request) =>
      toEventV1(await getEventOfAccount(db, request.principal!.accountId, request.params.id)),
  )
}
