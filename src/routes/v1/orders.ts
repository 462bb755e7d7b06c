import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { assertOneCursor } from '../../http/replies.ts'
import { ORDER_DEFAULTS, type OrderFields } from '../../orders/order.ts'
import { toOrderV1 } from '../../orders/order-views.ts'
import {
  deleteOrder,
  getOrder,
  listOrdersOfAccount,
  orderNotFound,
  placeOrder,
  updateOrder,
} from '../../orders/orders-service.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'
import { createOnce, IdempotencyHeaders } from '../idempotent-create.ts'
import { parseId } from '../ids.ts'
import { readFormFields } from './form-fields.ts'
import {
  CreateOrderBody,
  DeletedOrderSchema,
  ListOrdersQuery,
  OrderIdParams,
  OrderListSchema,
  OrderV1Schema,
  UpdateOrderBody,
} from './order-schemas.ts'

const tags = ['v1-order']
const security = API_KEY_SECURITY

/** Form bodies carry text: `pet_id=7`, `quantity=2`, `complete=true`, `ship_date=` (clear). */
const formFields = readFormFields({
  pet_id: 'integer',
  quantity: 'integer',
  complete: 'boolean',
  ship_date: 'nullable',
})

/**
 * preValidation hook: the `id` path parameter by the API's one int64 rule (routes/ids.ts):
 * 400 unless digits within int64, 404 for one no order can have.
 */
async function checkIdParam(request: FastifyRequest): Promise<void> {
  parseId((request.params as { id?: unknown }).id, 'id', orderNotFound)
}

function changesFromV1(body: Static<typeof UpdateOrderBody>): Partial<OrderFields> {
  const fields: Partial<OrderFields> = {}
  if (body.pet_id !== undefined) fields.petId = body.pet_id
  if (body.quantity !== undefined) fields.quantity = body.quantity
  if (body.ship_date !== undefined) fields.shipDate = body.ship_date
  if (body.status !== undefined) fields.status = body.status
  if (body.complete !== undefined) fields.complete = body.complete
  return fields
}

const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'ETag of the version this change is based on (412 if stale).' }),
  ),
})

/** Store orders on v1: the same records as `/v2/store/order`, in v1's shape. */
export async function v1OrderRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.post(
    '/order',
    {
      config: { scope: 'write:orders' },
      preValidation: formFields,
      schema: {
        operationId: 'createOrder',
        summary: 'Create an order',
        description:
          'Takes form fields (`-d pet_id=1`) or a JSON object. `pet_id` must be a pet of your account; the order gets the next id of your account. Answers 201 with the order and its `Location`.',
        tags,
        security,
        headers: IdempotencyHeaders,
        body: CreateOrderBody,
        response: { 201: OrderV1Schema, ...problemResponses(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal!
      const fields: OrderFields = {
        ...ORDER_DEFAULTS,
        ...changesFromV1(request.body),
        petId: request.body.pet_id,
      }
      // The id is reserved before the transaction opens (src/db/account-ids.ts says why).
      const assigned = await database.ids.reserve(accountId, 'order')
      return createOnce(db, request, reply, '/v1/order', async (trx) => {
        const { order } = await placeOrder(trx, accountId, fields, { assigned, petParam: 'pet_id' })
        return {
          status: 201,
          headers: { location: `/v1/order/${order.id}`, etag: etagFor(order.version) },
          body: toOrderV1(order),
        }
      })
    },
  )

  app.get(
    '/order/:id',
    {
      config: { scope: 'read:orders' },
      preValidation: checkIdParam,
      schema: {
        operationId: 'getOrder',
        summary: 'Get an order',
        tags,
        security,
        params: OrderIdParams,
        response: { 200: OrderV1Schema, ...problemResponses(404) },
      },
    },
    async (request, reply) => {
      const order = await getOrder(db, request.principal!.accountId, request.params.id)
      reply.header('etag', etagFor(order.version))
      return toOrderV1(order)
    },
  )

  app.patch(
    '/order/:id',
    {
      config: { scope: 'write:orders' },
      preValidation: [checkIdParam, formFields],
      schema: {
        operationId: 'updateOrder',
        summary: 'Update some fields of an order',
        description:
          'Only the fields sent change; an empty `ship_date` (or null) clears it. A new `pet_id` must be a pet of your account.',
        tags,
        security,
        params: OrderIdParams,
        headers: IfMatchHeaders,
        body: UpdateOrderBody,
        response: { 200: OrderV1Schema, ...problemResponses(404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const order = await db
        .transaction()
        .execute((trx) =>
          updateOrder(
            trx,
            request.principal!.accountId,
            request.params.id,
            changesFromV1(request.body),
            ifMatch,
          ),
        )
      reply.header('etag', etagFor(order.version))
      return toOrderV1(order)
    },
  )

  app.delete(
    '/order/:id',
    {
      config: { scope: 'write:orders' },
      preValidation: checkIdParam,
      schema: {
        operationId: 'deleteOrderV1',
        summary: 'Delete an order',
        tags,
        security,
        params: OrderIdParams,
        headers: IfMatchHeaders,
        response: {
          200: DeletedOrderSchema,
          ...problemResponses(404, 412),
        },
      },
    },
    async (request) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const order = await db
        .transaction()
        .execute((trx) => deleteOrder(trx, request.principal!.accountId, request.params.id, ifMatch))
      return { id: order.id, object: 'order' as const, deleted: true as const }
    },
  )

  app.get(
    '/order',
    {
      config: { scope: 'read:orders' },
      schema: {
        operationId: 'listOrders',
        summary: 'List orders, newest first',
        description:
          'Newest first by creation. Pass the last id of a page as `starting_after` for the next one (`ending_before` goes back); filters `status`, `pet_id`.',
        tags,
        security,
        querystring: ListOrdersQuery,
        response: { 200: OrderListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query
      assertOneCursor(q.starting_after, q.ending_before)
      const page = await listOrdersOfAccount(db, request.principal!.accountId, {
        limit: q.limit,
        ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
        ...(q.ending_before === undefined ? {} : { endingBefore: q.ending_before }),
        ...(q.status === undefined ? {} : { status: q.status }),
        ...(q.pet_id === undefined ? {} : { petId: q.pet_id }),
      })
      return {
        object: 'list' as const,
        data: page.orders.map(toOrderV1),
        has_more: page.hasMore,
        url: '/v1/order',
      }
    },
  )
}
