import { Type } from '@sinclair/typebox'
import {
  OrderStatusSchema,
  OrderV1Schema,
  QuantitySchema,
  ShipDateSchema,
} from '../../orders/order-schemas.ts'
import { LIMITS, Nullable } from '../../schemas/common.ts'

/** Schemas of the v1 order API: validation, serialisation, OpenAPI and handler types at once. */

const Id = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description })

const Complete = Type.Boolean({ description: 'Whether the order is complete (form: true or false).' })

export const CreateOrderBody = Type.Object(
  {
    pet_id: Id('The pet ordered: a pet of your account (required).'),
    quantity: Type.Optional(QuantitySchema),
    ship_date: Type.Optional(Nullable(ShipDateSchema)),
    status: Type.Optional(OrderStatusSchema),
    complete: Type.Optional(Complete),
  },
  { additionalProperties: false },
)

export const UpdateOrderBody = Type.Object(
  {
    pet_id: Type.Optional(Id('Another pet of your account.')),
    quantity: Type.Optional(QuantitySchema),
    ship_date: Type.Optional(
      Nullable({ ...ShipDateSchema, description: 'New ship date; empty or null clears it.' }),
    ),
    status: Type.Optional(OrderStatusSchema),
    complete: Type.Optional(Complete),
  },
  { additionalProperties: false },
)

export const OrderIdParams = Type.Object({ id: Id('The order id.') })

export const ListOrdersQuery = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: LIMITS.pageSize,
      default: 10,
      description: 'Page size, 1–100.',
    }),
    starting_after: Type.Optional(Id('Id of the last order of the previous page: the next (older) page.')),
    ending_before: Type.Optional(Id('Id of the first order of the current page: the previous (newer) page.')),
    status: Type.Optional(OrderStatusSchema),
    pet_id: Type.Optional(Id('Only the orders of this pet.')),
  },
  { additionalProperties: false },
)

export const OrderListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(OrderV1Schema),
  has_more: Type.Boolean(),
  url: Type.String(),
})

export { OrderV1Schema }
