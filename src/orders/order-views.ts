import type { Order } from './order.ts'
import type { OrderV1 } from './order-schemas.ts'

/** The v1 (snake_case) representation: the v1 routes' answer and the `order.*` events' object. */
export function toOrderV1(order: Order): OrderV1 {
  return {
    id: order.id,
    object: 'order',
    pet_id: order.petId,
    quantity: order.quantity,
    ship_date: order.shipDate,
    status: order.status,
    complete: order.complete,
    version: order.version,
    created_at: order.createdAt,
    updated_at: order.updatedAt,
  }
}

/** v1's names of the fields, for an `order.updated` event's `previous_attributes`. */
export const V1_NAMES: Record<string, string> = {
  petId: 'pet_id',
  quantity: 'quantity',
  shipDate: 'ship_date',
  status: 'status',
  complete: 'complete',
}
