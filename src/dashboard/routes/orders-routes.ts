import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { ORDER_STATUSES, type OrderStatus } from '../../orders/order.ts'
import { getOrder, listOrdersOfAccount, orderNotFound } from '../../orders/orders-service.ts'
import { petNamesByIds } from '../../pets/pets-service.ts'
import { csrfToken, noticeFrom, positiveInt, query, sendPage, sessionOf } from '../context.ts'
import { orderPage, ordersPage } from '../views/orders-views.ts'

const PAGE_SIZE = 20

/** The account's store orders, newest first, filtered by status and pet; and one order. Read-only. */
export async function ordersRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  app.get('/orders', async (request, reply) => {
    const session = sessionOf(request)
    const status = query(request, 'status')
    const pet = query(request, 'pet').slice(0, 16)
    const filters = {
      status: (ORDER_STATUSES as readonly string[]).includes(status) ? status : '',
      pet: positiveInt(pet) === undefined ? '' : pet,
    }
    const petId = positiveInt(filters.pet)
    const startingAfter = positiveInt(query(request, 'starting_after'))
    const endingBefore = positiveInt(query(request, 'ending_before'))
    const filter = {
      limit: PAGE_SIZE,
      ...(filters.status === '' ? {} : { status: filters.status as OrderStatus }),
      ...(petId === undefined ? {} : { petId }),
    }
    // A stale cursor (an order deleted since) shows the first page rather than an error.
    const page = await listOrdersOfAccount(db, session.accountId, {
      ...filter,
      ...(endingBefore !== undefined
        ? { endingBefore }
        : startingAfter !== undefined
          ? { startingAfter }
          : {}),
    }).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'invalid_cursor') {
        return listOrdersOfAccount(db, session.accountId, filter)
      }
      throw error
    })
    const petNames = await petNamesByIds(db, session.accountId, [...new Set(page.orders.map((o) => o.petId))])
    return sendPage(
      reply,
      ordersPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        orders: page.orders,
        petNames,
        filters,
        // Going back (ending_before), "has more" means newer pages; otherwise older ones.
        hasNewer: endingBefore !== undefined ? page.hasMore : startingAfter !== undefined,
        hasOlder: endingBefore !== undefined ? true : page.hasMore,
      }),
    )
  })

  app.get('/orders/:id', async (request, reply) => {
    const session = sessionOf(request)
    const text = (request.params as { id: string }).id.slice(0, 20)
    const id = positiveInt(text)
    if (id === undefined) throw orderNotFound(text)
    const order = await getOrder(db, session.accountId, id)
    const petNames = await petNamesByIds(db, session.accountId, [order.petId])
    return sendPage(reply, orderPage({ csrf: csrfToken(reply), email: session.email, order, petNames }))
  })
}
