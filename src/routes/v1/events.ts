import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { toEventV1 } from '../../events/event.ts'
import { EventPoller } from '../../events/event-poller.ts'
import {
  EventIdParams,
  EventListSchema,
  EventV1Schema,
  ListEventsQuery,
  StreamEventsQuery,
} from '../../events/event-schemas.ts'
import { EventStreams } from '../../events/event-streams.ts'
import { eventFilterFrom, getEventOfAccount, listEventsOfAccount } from '../../events/events-service.ts'
import { assertOneCursor } from '../../http/replies.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'

const tags = ['v1-event']
const security = API_KEY_SECURITY

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies such as nginx would otherwise buffer the stream.
  'x-accel-buffering': 'no',
  // One stream per connection: when the stream ends (the service stopping), so does the connection.
  connection: 'close',
}

/** Time between two reads of the events table while streams are open. */
const POLL_INTERVAL_MS = 250

/**
 * `GET /v1/event`, `GET /v1/event/{id}` (the account's events, newest first) and
 * `GET /v1/event/stream` (Server-Sent Events, fed by one poller shared by every stream).
 */
export async function v1EventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, config } = app.deps
  // On the background connections: a saturated main pool would stall every open stream.
  const poller = new EventPoller(app.deps.database.background, {
    intervalMs: POLL_INTERVAL_MS,
    batch: 500,
    onError: (error) => app.log.warn({ err: error }, 'could not read new events for the event streams'),
  })
  const streams = new EventStreams(db, poller, {
    perAccount: config.eventsStreamsPerAccount,
    heartbeatMs: config.eventsHeartbeatSeconds * 1000,
    maxBufferedBytes: 1024 * 1024,
    replayBatch: 500,
  })
  // Streams never end by themselves: end them as closing begins, so the listener can close
  // (clients reconnect with Last-Event-ID, to another instance), and stop reading the table
  // before the database closes.
  app.addHook('preClose', async () => {
    streams.closeAll()
    await poller.close()
  })
  // Ended as soon as the listener has closed, too: the stop waits for the requests in flight.
  void app.deps.shutdown.listenerClosed.then(() => streams.closeAll())

  app.get(
    '/event/stream',
    {
      config: { scope: 'read:events' },
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream events as they happen (Server-Sent Events)',
        description:
          'Each event is sent as `id: <event id>`, `event: <type>`, `data: <event JSON>`. Starts from now; with the `Last-Event-ID` header (or `last_event_id`) the events after that one are replayed first. A `: heartbeat` comment comes every 15 s (`EVENTS_HEARTBEAT_SECONDS`). Takes the filters of the list. At most `EVENTS_STREAMS_PER_ACCOUNT` streams per account and instance (429 past it).',
        tags,
        security,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 64 })) }),
        querystring: StreamEventsQuery,
        response: {
          200: {
            description: 'A text/event-stream that stays open.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...problemResponses(),
        },
      },
    },
    async (request, reply) => {
      const q = request.query
      const filter = eventFilterFrom(q)
      const lastEventId = request.headers['last-event-id'] || q.last_event_id || undefined
      // HEAD: the headers a stream would have, without opening one.
      if (request.method === 'HEAD') return reply.headers(SSE_HEADERS).send()
      const stream = await streams.openStream(request.principal!.accountId, filter, lastEventId)
      // A stream ends when the client goes away (or went away while it was being opened).
      if (reply.raw.destroyed) stream.destroy()
      else reply.raw.once('close', () => stream.destroy())
      return reply.headers(SSE_HEADERS).send(stream)
    },
  )

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
