import { Type } from '@sinclair/typebox'
import {
  OrderStatusSchema,
  OrderV1Schema,
  QuantitySchema,
  ShipDateSchema,
} from '../../orders/order-schemas.ts'
import { Nullable } from '../../schemas/common.ts'
import { ListOf, ListQuery } from '../../schemas/list.ts'

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

export const ListOrdersQuery = ListQuery(
  {
    starting_after: Id('Id of the last order of the previous page: the next (older) page.'),
    ending_before: Id('Id of the first order of the current page: the previous (newer) page.'),
  },
  {
    status: Type.Optional(OrderStatusSchema),
    pet_id: Type.Optional(Id('Only the orders of this pet.')),
  },
)

export const OrderListSchema = ListOf(OrderV1Schema)

export const DeletedOrderSchema = Type.Object({
  id: Type.Integer(),
  object: Type.Literal('order'),
  deleted: Type.Literal(true),
})

export { OrderV1Schema }
