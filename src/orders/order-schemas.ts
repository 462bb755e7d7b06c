import { type Static, Type } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../schemas/common.ts'
import { MAX_ORDER_QUANTITY, ORDER_STATUSES } from './order.ts'

/**
 * The v1 shape of an order, here in its feature because events carry it (`data.object` of
 * `order.*`) as well as the v1 routes answer it: one description of it for both.
 */

export const OrderStatusSchema = StringEnum(ORDER_STATUSES, {
  description: 'placed, approved or delivered; any may follow any other.',
})

export const ShipDateSchema = Type.String({
  format: 'date-time',
  maxLength: 64,
  description: 'RFC 3339 date-time with a time zone (2026-11-24T12:00:00Z); read back exactly as sent.',
})

export const QuantitySchema = Type.Integer({
  minimum: 1,
  maximum: MAX_ORDER_QUANTITY,
  description: `How many, 1–${MAX_ORDER_QUANTITY} (default 1).`,
})

export const OrderV1Schema = Type.Object(
  {
    id: Type.Integer({ description: 'Per account: chosen on v2, or assigned.', examples: [1] }),
    object: Type.Literal('order'),
    pet_id: Type.Integer({
      description: 'The pet ordered: a pet of your account when the order was written.',
    }),
    quantity: Type.Integer({ examples: [1] }),
    ship_date: Nullable(Type.String({ description: 'RFC 3339 date-time as sent, or null.' })),
    status: OrderStatusSchema,
    complete: Type.Boolean(),
    version: Type.Integer({ description: 'Increases on every change; the ETag.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A store order, v1 representation.' },
)

export type OrderV1 = Static<typeof OrderV1Schema>
