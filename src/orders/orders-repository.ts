import type { Insertable, Selectable } from 'kysely'
import { keysetPageOf, type Page } from '../db/keyset-page.ts'
import type { Db, OrdersTable } from '../db/schema.ts'
import type { Order, OrderFields, OrderStatus } from './order.ts'

type OrderRow = Selectable<OrdersTable>

/** Every column but the internal `seq`, which is never shown. */
const COLUMNS = [
  'account_id',
  'id',
  'pet_id',
  'quantity',
  'ship_date',
  'status',
  'complete',
  'version',
  'created_at',
  'updated_at',
] as const

function toOrder(row: Omit<OrderRow, 'seq'>): Order {
  return {
    id: row.id,
    accountId: row.account_id,
    petId: row.pet_id,
    quantity: row.quantity,
    shipDate: row.ship_date,
    status: row.status as OrderStatus,
    complete: row.complete === 1,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

type OrderColumns = Partial<Insertable<OrdersTable>>

function toColumns(fields: Partial<OrderFields>): OrderColumns {
  const out: OrderColumns = {}
  if (fields.petId !== undefined) out.pet_id = fields.petId
  if (fields.quantity !== undefined) out.quantity = fields.quantity
  if (fields.shipDate !== undefined) out.ship_date = fields.shipDate
  if (fields.status !== undefined) out.status = fields.status
  if (fields.complete !== undefined) out.complete = fields.complete ? 1 : 0
  return out
}

export async function findOrder(db: Db, accountId: string, id: number): Promise<Order | undefined> {
  const row = await db
    .selectFrom('orders')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return row === undefined ? undefined : toOrder(row)
}

/**
 * Inserts the order with this id unless the account already has one: undefined then (another
 * request took the id first). ON CONFLICT rather than a caught unique violation, which on
 * PostgreSQL would abort the caller's transaction.
 */
export async function insertOrderIfAbsent(
  db: Db,
  accountId: string,
  id: number,
  fields: OrderFields,
  at: string,
): Promise<Order | undefined> {
  const row = await db
    .insertInto('orders')
    .values({
      account_id: accountId,
      id,
      pet_id: fields.petId,
      quantity: fields.quantity,
      ship_date: fields.shipDate,
      status: fields.status,
      complete: fields.complete ? 1 : 0,
      version: 1,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['account_id', 'id']).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst()
  return row === undefined ? undefined : toOrder(row)
}

/** Writes the fields only if the order is still at `version`; undefined when it is not (or gone). */
export async function updateOrderAtVersion(
  db: Db,
  accountId: string,
  id: number,
  version: number,
  fields: Partial<OrderFields>,
  at: string,
): Promise<Order | undefined> {
  const row = await db
    .updateTable('orders')
    .set({ ...toColumns(fields), version: version + 1, updated_at: at })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('version', '=', version)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row === undefined ? undefined : toOrder(row)
}

export async function deleteOrderAtVersion(
  db: Db,
  accountId: string,
  id: number,
  version: number,
): Promise<boolean> {
  const result = await db
    .deleteFrom('orders')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

export interface OrderListQuery {
  limit: number
  /** Order ids: the cursor is looked up to its creation position. */
  startingAfter?: number
  endingBefore?: number
  status?: OrderStatus
  petId?: number
}

/**
 * One page, newest first by creation (ids are chosen by clients, so they say nothing of age),
 * keyset on the internal `seq`; undefined when a cursor names no order of the account.
 */
export function listOrders(
  db: Db,
  accountId: string,
  query: OrderListQuery,
): Promise<Page<Order> | undefined> {
  return keysetPageOf(
    db.selectFrom('orders').where('account_id', '=', accountId),
    query,
    (orders) =>
      orders
        .select(COLUMNS)
        .$if(query.status !== undefined, (q) => q.where('status', '=', query.status!))
        .$if(query.petId !== undefined, (q) => q.where('pet_id', '=', query.petId!)),
    toOrder,
  )
}

export async function deleteAllOrdersOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('orders').where('account_id', '=', accountId).execute()
}
