import type { Order } from '../../orders/order.ts'
import type { OrderV2 } from './order-schemas.ts'

/** The Petstore v2 representation: `shipDate` left out when there is none, never null. */
export function toOrderV2(order: Order): OrderV2 {
  const out: OrderV2 = {
    id: order.id,
    petId: order.petId,
    quantity: order.quantity,
    status: order.status,
    complete: order.complete,
  }
  if (order.shipDate !== null) out.shipDate = order.shipDate
  return out
}
