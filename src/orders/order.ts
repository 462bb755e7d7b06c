/** The order statuses of the Petstore's `Order`; any may follow any other (the Petstore has no rules). */
export const ORDER_STATUSES = ['placed', 'approved', 'delivered'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

/** The most of one pet an order may ask for: the Petstore's int32 leaves it open; a store does not. */
export const MAX_ORDER_QUANTITY = 10_000

/** A store order as the domain knows it, whichever API version wrote it. */
export interface Order {
  /** Per account: chosen by the client (v2) or assigned. */
  id: number
  accountId: string
  /** A pet of the account when the order was written (it may have been deleted since). */
  petId: number
  quantity: number
  /** RFC 3339 date-time exactly as sent; null when none was. */
  shipDate: string | null
  status: OrderStatus
  complete: boolean
  version: number
  createdAt: string
  updatedAt: string
}

/** Every field of an order: what a create, or a v2 replace, writes. */
export interface OrderFields {
  petId: number
  quantity: number
  shipDate: string | null
  status: OrderStatus
  complete: boolean
}

/** What an order that leaves a field out gets: one of one pet, placed, not complete, no ship date. */
export const ORDER_DEFAULTS: Omit<OrderFields, 'petId'> = {
  quantity: 1,
  shipDate: null,
  status: 'placed',
  complete: false,
}
