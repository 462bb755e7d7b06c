import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { type AjvError, fieldErrors, listedErrors, moreText } from '../../errors/validation-errors.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { ORDER_DEFAULTS, type OrderFields } from '../../orders/order.ts'
import { deleteOrder, getOrder, orderNotFound, placeOrder } from '../../orders/orders-service.ts'
import { PET_STATUSES } from '../../pets/pet-status.ts'
import { countPetsByStatus } from '../../pets/pets-service.ts'
import { createOnce, IdempotencyHeaders } from '../idempotent-create.ts'
import { exactIdOf, parseId, parseNewId } from '../ids.ts'
import { assertJson } from './assertions.ts'
import { API_KEY_HEADER, oauthScope, UNDECLARED_SECURITY } from './authentication.ts'
import { OrderIdV2Params, OrderV2Body, type OrderV2Input } from './order-schemas.ts'
import { toOrderV2 } from './order-views.ts'
import { InventorySchema } from './pet-schemas.ts'
import type { ApiResponse } from './pet-views.ts'
import { v2Problems } from './problems.ts'

const tags = ['store']
const TOKEN_NOTE =
  'The Petstore declares no security here; this service needs an OAuth bearer token (401 without one): give your generated client the token as a default `Authorization: Bearer …` header.'

/**
 * preValidation hook: the `orderId` path parameter by the int64 rule (routes/ids.ts): 400 "Invalid ID
 * supplied" unless an integer within int64, 404 "Order not found" for one no order can have.
 */
async function checkOrderIdParam(request: FastifyRequest): Promise<void> {
  parseId((request.params as { orderId?: unknown }).orderId, 'orderId', orderNotFound)
}

/**
 * The order's own id, when the body names one: a JSON integer from 1 to 2^53−1, read on its
 * digits by the one rule for new ids (routes/ids.ts); absent or null: one is assigned.
 */
function orderIdOf(body: unknown): number | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined
  const sent = exactIdOf(body as { id?: unknown })
  return sent === undefined || sent === null ? undefined : parseNewId(sent, 'id')
}

/** The Petstore's one answer to a bad order, 400 "Invalid Order", listing every field at fault. */
function assertValidOrder(request: FastifyRequest): void {
  const validation = (request.validationError as { validation?: AjvError[] } | undefined)?.validation
  if (validation === undefined) return
  const all = fieldErrors(validation)
  const { errors, omitted } = listedErrors(all)
  throw new ApiError(
    'invalid_order',
    `Invalid Order: ${errors.map((e) => e.message).join('; ')}${omitted === 0 ? '' : `;${moreText(omitted)}`}.`,
    {
      errors,
      ...(all.length === 1 ? { param: errors[0]!.param } : {}),
      ...(omitted === 0 ? {} : { extensions: { errors_omitted: omitted } }),
    },
  )
}

/** Every field (a placed order replaces a whole one): absent or null takes the default. */
function fieldsFromV2(body: OrderV2Input): OrderFields {
  return {
    petId: body.petId,
    quantity: body.quantity ?? ORDER_DEFAULTS.quantity,
    shipDate: body.shipDate ?? ORDER_DEFAULTS.shipDate,
    status: body.status ?? ORDER_DEFAULTS.status,
    complete: body.complete ?? ORDER_DEFAULTS.complete,
  }
}

/** The Petstore's store resource: the inventory of pets, and orders. */
export async function v2StoreRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.get(
    '/store/inventory',
    {
      config: { scope: 'read:pets', apiKeyHeader: true },
      schema: {
        operationId: 'getInventory',
        summary: 'Returns pet inventories by status',
        description:
          'A map of status to the number of your pets in it. Takes an API key in `api_key`, or an OAuth token.',
        tags,
        security: [API_KEY_HEADER, oauthScope('read:pets')],
        response: { 200: InventorySchema, ...v2Problems() },
      },
    },
    async (request) => {
      const counts = await countPetsByStatus(db, request.principal!.accountId)
      return Object.fromEntries(PET_STATUSES.map((s) => [s, counts[s] ?? 0]))
    },
  )

  app.post(
    '/store/order',
    {
      attachValidation: true,
      config: { scope: 'write:orders', ...UNDECLARED_SECURITY },
      preValidation: async (request) => assertJson(request, 'order'),
      schema: {
        operationId: 'placeOrder',
        summary: 'Place an order for a pet',
        description: `With an \`id\` (1 to 2^53−1), creates your order with that id or replaces your order that has it (fields left out take their defaults: quantity 1, status placed, complete false, no shipDate); without one, an id is assigned. \`petId\` must be a pet of your account. 400 "Invalid Order" names the fields at fault. Takes \`Idempotency-Key\`. ${TOKEN_NOTE}`,
        tags,
        security: [oauthScope('write:orders')],
        headers: IdempotencyHeaders,
        body: OrderV2Body,
        response: { 200: Type.Ref('Order'), ...v2Problems(409, 413, 415) },
      },
    },
    async (request, reply) => {
      const id = orderIdOf(request.body)
      assertValidOrder(request)
      const accountId = request.principal!.accountId
      const fields = fieldsFromV2(request.body)
      // An id is reserved before the transaction opens (src/db/account-ids.ts says why).
      const source = id === undefined ? { assigned: await database.ids.reserve(accountId, 'order') } : { id }
      return createOnce(db, request, reply, '/v2/store/order', async (trx) => {
        const { order } = await placeOrder(trx, accountId, fields, { ...source, petParam: 'petId' })
        return {
          status: 200,
          headers: { etag: etagFor(order.version), location: `/v2/store/order/${order.id}` },
          body: toOrderV2(order),
        }
      })
    },
  )

  app.get(
    '/store/order/:orderId',
    {
      attachValidation: true,
      config: { scope: 'read:orders', ...UNDECLARED_SECURITY },
      preValidation: checkOrderIdParam,
      schema: {
        operationId: 'getOrderById',
        summary: 'Find purchase order by ID',
        description: `Any id of an order of your account (the sample server's 1–10 does not apply). 400 "Invalid ID supplied", 404 "Order not found". ${TOKEN_NOTE}`,
        tags,
        security: [oauthScope('read:orders')],
        params: OrderIdV2Params,
        response: { 200: Type.Ref('Order'), ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const order = await getOrder(db, request.principal!.accountId, request.params.orderId)
      reply.header('etag', etagFor(order.version))
      return toOrderV2(order)
    },
  )

  app.delete(
    '/store/order/:orderId',
    {
      attachValidation: true,
      config: { scope: 'write:orders', ...UNDECLARED_SECURITY },
      preValidation: checkOrderIdParam,
      schema: {
        operationId: 'deleteOrder',
        summary: 'Delete purchase order by ID',
        description: `400 "Invalid ID supplied", 404 "Order not found". Takes \`If-Match\`. ${TOKEN_NOTE}`,
        tags,
        security: [oauthScope('write:orders')],
        params: OrderIdV2Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 412) },
      },
    },
    async (request): Promise<ApiResponse> => {
      const { orderId } = request.params
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const order = await db
        .transaction()
        .execute((trx) => deleteOrder(trx, request.principal!.accountId, orderId, ifMatch))
      return { code: 200, type: 'unknown', message: String(order.id) }
    },
  )
}
