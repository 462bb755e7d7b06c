import { type Static, Type } from '@sinclair/typebox'
import { ORDER_STATUSES } from '../../orders/order.ts'
import { QuantitySchema, ShipDateSchema } from '../../orders/order-schemas.ts'
import { Nullable, StringEnum } from '../../schemas/common.ts'

/**
 * The Petstore v2 `Order` (camelCase). Answers leave an absent `shipDate` out, never null; in
 * requests, null is taken as absent.
 */

const OrderStatusV2 = StringEnum(ORDER_STATUSES, { description: 'Order Status' })
const Id = (description: string) =>
  Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description })

export const OrderV2Schema = Type.Object(
  {
    id: Type.Integer({ format: 'int64', description: 'Per account: as sent, or assigned.' }),
    petId: Type.Integer({ format: 'int64' }),
    quantity: Type.Integer({ format: 'int32' }),
    shipDate: Type.Optional(Type.String({ format: 'date-time' })),
    status: OrderStatusV2,
    complete: Type.Boolean(),
  },
  { $id: 'Order', description: 'A store order, Petstore v2 representation.' },
)

export type OrderV2 = Static<typeof OrderV2Schema>

/** placeOrder's body. `id` is read by the route first (the one int64 rule, routes/ids.ts). */
export const OrderV2Body = Type.Object(
  {
    id: Type.Optional(
      Nullable(
        Id(
          'Your id for the order, 1 to 2^53−1: creates the order with it, or replaces your order that has it. Absent: one is assigned.',
        ),
      ),
    ),
    petId: Id('The pet ordered: a pet of your account (400 "Invalid Order" otherwise).'),
    quantity: Type.Optional(Nullable({ ...QuantitySchema, format: 'int32' })),
    shipDate: Type.Optional(Nullable(ShipDateSchema)),
    status: Type.Optional(Nullable({ ...OrderStatusV2, description: 'Order Status (default placed).' })),
    complete: Type.Optional(Nullable(Type.Boolean({ description: 'Default false.' }))),
  },
  { additionalProperties: false },
)

export type OrderV2Input = Static<typeof OrderV2Body>

export const OrderIdV2Params = Type.Object({
  orderId: Type.Integer({ format: 'int64', description: 'ID of the order' }),
})

export const ORDER_V2_SCHEMAS = [OrderV2Schema]
