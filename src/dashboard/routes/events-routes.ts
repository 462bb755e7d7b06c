import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { toEventV1 } from '../../events/event.ts'
import type { EventFilter } from '../../events/event-filter.ts'
import { eventFilterFrom, getEventOfAccount, listEventsOfAccount } from '../../events/events-service.ts'
import { csrfToken, noticeFrom, query, sendPage, sessionOf } from '../context.ts'
import { EVENT_TYPE_CHOICES, eventPage, eventsPage } from '../views/events-views.ts'

const PAGE_SIZE = 20

/** The account's events, newest first, filtered by type; and one event with its JSON. */
export async function eventsRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  app.get('/events', async (request, reply) => {
    const session = sessionOf(request)
    const picked = query(request, 'type')
    const type = EVENT_TYPE_CHOICES.includes(picked as (typeof EVENT_TYPE_CHOICES)[number]) ? picked : ''
    const filter: EventFilter = type === '' ? {} : eventFilterFrom({ type: [type] })
    const startingAfter = query(request, 'starting_after').slice(0, 64) || undefined
    const endingBefore = query(request, 'ending_before').slice(0, 64) || undefined
    // A stale cursor (an event purged since) shows the first page rather than an error.
    const page = await listEventsOfAccount(db, session.accountId, {
      limit: PAGE_SIZE,
      filter,
      ...(endingBefore !== undefined
        ? { endingBefore }
        : startingAfter !== undefined
          ? { startingAfter }
          : {}),
    }).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'invalid_cursor') {
        return listEventsOfAccount(db, session.accountId, { limit: PAGE_SIZE, filter })
      }
      throw error
    })
    return sendPage(
      reply,
      eventsPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        events: page.events.map(toEventV1),
        type,
        hasNewer: endingBefore !== undefined ? page.hasMore : startingAfter !== undefined,
        hasOlder: endingBefore !== undefined ? true : page.hasMore,
      }),
    )
  })

  app.get('/events/:id', async (request, reply) => {
    const session = sessionOf(request)
    const { id } = request.params as { id: string }
    const event = await getEventOfAccount(db, session.accountId, id.slice(0, 64))
    return sendPage(
      reply,
      eventPage({ csrf: csrfToken(reply), email: session.email, event: toEventV1(event) }),
    )
  })
}
