/** `petctl orders`: store orders for the pets of your account (v1, API key). */
import type { OrderStatus, OrderUpdateParams } from '../../../clients/typescript/src/index.ts'
import { group, leaf, type Register, type Run } from '../command.ts'
import { UsageError } from '../errors.ts'
import { printList, show, showDeleted } from '../output.ts'
import { integer, oneOf, orderId, petId } from '../parse.ts'

interface OrderFlags {
  petId?: string
  quantity?: string
  shipDate?: string
  status?: string
  complete?: string
}

interface ListFlags {
  limit?: string
  startingAfter?: string
  status?: string
  petId?: string
  all?: boolean
}

const ORDER_STATUSES: readonly OrderStatus[] = ['placed', 'approved', 'delivered']
const COLUMNS = ['id', 'pet_id', 'quantity', 'status', 'complete', 'ship_date', 'created_at']

export const registerOrders: Register = (program, io) => {
  const orders = group(program, 'orders', 'store orders for your pets (v1, API key)', [
    'petctl orders list --status placed',
  ])
  leaf(orders, io, 'create', {
    description: 'create an order (POST /v1/order)',
    examples: ['petctl orders create --pet-id 1 --quantity 2 --ship-date 2026-12-24T18:00:00Z'],
    action: create,
  })
    .option('--pet-id <id>', 'required: a pet of your account')
    .option('--quantity <n>', '1-10000 (default 1)')
    .option('--ship-date <date>', 'RFC 3339 with a time zone, e.g. 2026-12-24T18:00:00Z')
    .option('--status <status>', 'placed, approved or delivered (default placed)')
    .option('--complete <bool>', 'true or false (default false)')
    .option('--idempotency-key <key>', 'one is generated otherwise')
  leaf(orders, io, 'get', {
    description: 'show an order (GET /v1/order/ID)',
    examples: ['petctl orders get 1 --json'],
    action: get,
  }).argument('<id>', 'the order id')
  leaf(orders, io, 'update', {
    description: 'change some fields of an order (PATCH /v1/order/ID)',
    examples: ["petctl orders update 1 --status delivered --complete true --ship-date ''"],
    action: update,
  })
    .argument('<id>', 'the order id')
    .option('--pet-id <id>', 'another pet of your account')
    .option('--quantity <n>')
    .option('--ship-date <date>', '"" clears it')
    .option('--status <status>', 'placed, approved or delivered')
    .option('--complete <bool>', 'true or false')
    .option('--if-match <etag>', 'refuse (412) if the order changed since this ETag')
  leaf(orders, io, 'delete', {
    description: 'delete an order (DELETE /v1/order/ID)',
    examples: ['petctl orders delete 1'],
    action: remove,
  })
    .argument('<id>', 'the order id')
    .option('--if-match <etag>', 'refuse (412) if the order changed since this ETag')
  leaf(orders, io, 'list', {
    description: 'list orders, newest first (GET /v1/order)',
    examples: ['petctl orders list --pet-id 1', 'petctl orders list --all --json'],
    action: list,
  })
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--status <status>', 'placed, approved or delivered')
    .option('--pet-id <id>', 'only the orders of this pet')
    .option('--all', 'every page (a progress count on a terminal)')
}

/** The order fields among the flags given, typed as the API takes them (checked before any request). */
function orderFields(flags: OrderFlags): OrderUpdateParams {
  const out: OrderUpdateParams = {}
  if (flags.petId !== undefined) out.pet_id = petId(flags.petId)
  if (flags.quantity !== undefined) out.quantity = integer(flags.quantity, '--quantity', 1)
  if (flags.shipDate !== undefined) out.ship_date = flags.shipDate === '' ? null : flags.shipDate
  if (flags.status !== undefined) out.status = oneOf(flags.status, ORDER_STATUSES, '--status')
  if (flags.complete !== undefined) {
    if (flags.complete !== 'true' && flags.complete !== 'false')
      throw new UsageError(`--complete must be true or false, not ${flags.complete}.`)
    out.complete = flags.complete === 'true'
  }
  return out
}

async function create(run: Run<OrderFlags>): Promise<void> {
  const { pet_id, ...rest } = orderFields(run.flags)
  if (pet_id === undefined) throw new UsageError('petctl orders create needs --pet-id ID.')
  show(run, await run.client('key').orders.create({ ...rest, pet_id }, run.options))
}

async function get(run: Run<object>, id: string): Promise<void> {
  show(run, await run.client('key').orders.get(orderId(id), run.options))
}

async function update(run: Run<OrderFlags>, id: string): Promise<void> {
  const order = orderId(id)
  const changes = orderFields(run.flags)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --pet-id, --quantity, --ship-date, --status or --complete.')
  show(run, await run.client('key').orders.update(order, changes, run.options))
}

async function remove(run: Run<object>, id: string): Promise<void> {
  showDeleted(run, 'order', await run.client('key').orders.delete(orderId(id), run.options))
}

async function list(run: Run<ListFlags>): Promise<void> {
  const { flags } = run
  const { pet_id, status } = orderFields({
    ...(flags.petId === undefined ? {} : { petId: flags.petId }),
    ...(flags.status === undefined ? {} : { status: flags.status }),
  })
  const params = {
    ...(flags.limit === undefined ? {} : { limit: integer(flags.limit, '--limit', 1) }),
    ...(flags.startingAfter === undefined ? {} : { starting_after: orderId(flags.startingAfter) }),
    ...(status === undefined ? {} : { status }),
    ...(pet_id === undefined ? {} : { pet_id }),
  }
  const pages = run
    .client('key')
    .orders.list({ ...(flags.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(pages, flags.all === true, 'orders', COLUMNS, run)
}
