import type { ReservedId } from '../db/account-ids.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { recordEvent } from '../events/events-service.ts'
import { fieldChanges } from '../lib/field-diff.ts'
import type { IfMatch } from '../lib/optimistic.ts'
import { MAX_WRITE_ATTEMPTS, writeAtCurrentVersion } from '../lib/optimistic.ts'
import { nowIso } from '../lib/time.ts'
import { findPet } from '../pets/pets-service.ts'
import type { Order, OrderFields } from './order.ts'
import { toOrderV1, V1_NAMES } from './order-views.ts'
import {
  deleteOrderAtVersion,
  findOrder,
  insertOrderIfAbsent,
  listOrders,
  type OrderListQuery,
  updateOrderAtVersion,
} from './orders-repository.ts'

/**
 * The order domain shared by v1 and v2: the pet rule, client-chosen ids, and the event written
 * with every change. Every function takes the transaction its caller (the route) opened.
 */

export function orderNotFound(id: number | string): ApiError {
  return new ApiError('order_not_found', `Order not found: no order with id ${id} exists in your account.`, {
    param: 'id',
  })
}

/** `param` is the field as the caller's API version names it (`petId` on v2, `pet_id` on v1). */
async function assertPetOfAccount(db: Db, accountId: string, petId: number, param: string): Promise<void> {
  if ((await findPet(db, accountId, petId)) !== undefined) return
  throw new ApiError(
    'order_pet_not_found',
    `Invalid Order: ${param} ${petId} is not a pet of your account; order one of your pets.`,
    { param },
  )
}

const COMPARED: (keyof OrderFields)[] = ['petId', 'quantity', 'shipDate', 'status', 'complete']

async function recordCreated(db: Db, order: Order, at: string): Promise<void> {
  await recordEvent(db, {
    accountId: order.accountId,
    type: 'order.created',
    objectId: String(order.id),
    object: toOrderV1(order),
    at,
  })
}

/**
 * Where a placed order's id comes from: the client's `id`, or one reserved for it from the
 * account's ids (`database.ids.reserve(accountId, 'order')`, before the transaction opens).
 */
export type OrderId = { id: number } | { assigned: ReservedId }

/**
 * Places an order. With a client's `id`, the account's order with that id is replaced (every
 * field: those not sent take their defaults, `order.updated`) or, when there is none, created
 * with that id (`order.created`); otherwise it is created with the id reserved for it.
 */
export async function placeOrder(
  db: Db,
  accountId: string,
  fields: OrderFields,
  options: OrderId & { petParam: string },
): Promise<{ order: Order; created: boolean }> {
  if ('assigned' in options) {
    await assertPetOfAccount(db, accountId, fields.petId, options.petParam)
    const at = nowIso()
    // A client may have chosen the reserved id already: insert skips to another one then.
    const order = await options.assigned.insert(db, (id) =>
      insertOrderIfAbsent(db, accountId, id, fields, at),
    )
    await recordCreated(db, order, at)
    return { order, created: true }
  }
  const id = options.id
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const current = await findOrder(db, accountId, id)
    if (current === undefined) {
      await assertPetOfAccount(db, accountId, fields.petId, options.petParam)
      const at = nowIso()
      const order = await insertOrderIfAbsent(db, accountId, id, fields, at)
      // Another request created this id meanwhile: replace what it wrote.
      if (order === undefined) continue
      await recordCreated(db, order, at)
      return { order, created: true }
    }
    const replaced = await writeChanges(db, current, fields, options.petParam)
    if (replaced !== undefined) return { order: replaced, created: false }
  }
  throw concurrentChange()
}

function concurrentChange(): ApiError {
  return new ApiError(
    'concurrent_change',
    'Other requests kept changing this order while this one ran; nothing was changed. Retry the request.',
    { headers: { 'retry-after': '1' } },
  )
}

/**
 * Writes what differs from `current` at its version, with its `order.updated` event; the order
 * as it is when nothing differs; undefined when another writer moved the version.
 */
async function writeChanges(
  db: Db,
  current: Order,
  fields: Partial<OrderFields>,
  petParam: string,
): Promise<Order | undefined> {
  const { changes, previous } = fieldChanges<OrderFields>(current, fields, COMPARED)
  // The pet rule holds where an order names a pet: an unchanged petId may name a pet since deleted.
  if (changes.petId !== undefined) await assertPetOfAccount(db, current.accountId, changes.petId, petParam)
  if (Object.keys(changes).length === 0) return current
  const at = nowIso()
  const updated = await updateOrderAtVersion(db, current.accountId, current.id, current.version, changes, at)
  if (updated === undefined) return undefined
  await recordEvent(db, {
    accountId: current.accountId,
    type: 'order.updated',
    objectId: String(current.id),
    object: toOrderV1(updated),
    previousAttributes: Object.fromEntries(
      Object.entries(previous).map(([key, value]) => [V1_NAMES[key] ?? key, value]),
    ),
    at,
  })
  return updated
}

export async function getOrder(db: Db, accountId: string, id: number): Promise<Order> {
  const order = await findOrder(db, accountId, id)
  if (order === undefined) throw orderNotFound(id)
  return order
}

/** Changes the fields sent (v1's PATCH), at the current version; 412 when `ifMatch` is stale. */
export async function updateOrder(
  db: Db,
  accountId: string,
  id: number,
  change: Partial<OrderFields>,
  ifMatch?: IfMatch,
): Promise<Order> {
  return writeAtCurrentVersion({
    load: () => findOrder(db, accountId, id),
    missing: () => orderNotFound(id),
    ifMatch,
    write: (current) => writeChanges(db, current, change, 'pet_id'),
  })
}

export async function deleteOrder(db: Db, accountId: string, id: number, ifMatch?: IfMatch): Promise<Order> {
  return writeAtCurrentVersion({
    load: () => findOrder(db, accountId, id),
    missing: () => orderNotFound(id),
    ifMatch,
    write: async (current) => {
      if (!(await deleteOrderAtVersion(db, accountId, id, current.version))) return undefined
      await recordEvent(db, {
        accountId,
        type: 'order.deleted',
        objectId: String(id),
        object: toOrderV1(current),
        at: nowIso(),
      })
      return current
    },
  })
}

/** One page of v1's list; 400 invalid_cursor when a cursor names no order of the account. */
export async function listOrdersOfAccount(
  db: Db,
  accountId: string,
  query: OrderListQuery,
): Promise<{ orders: Order[]; hasMore: boolean }> {
  const page = await listOrders(db, accountId, query)
  if (page !== undefined) return { orders: page.rows, hasMore: page.hasMore }
  const cursor = query.startingAfter !== undefined ? 'starting_after' : 'ending_before'
  throw new ApiError(
    'invalid_cursor',
    `${cursor} ${query.startingAfter ?? query.endingBefore} is not an order of your account (deleted, or never one).`,
    { param: cursor },
  )
}

/** For a sandbox's reset. */
export { deleteAllOrdersOfAccount } from './orders-repository.ts'
export type { OrderListQuery }
