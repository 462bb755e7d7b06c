import { ORDER_STATUSES, type Order } from '../../orders/order.ts'
import { toOrderV1 } from '../../orders/order-views.ts'
import { type Html, html } from '../../web/html.ts'
import type { Notice } from '../../web/layout.ts'
import { pageLinks } from './data-views.ts'
import { appPage, when } from './layout.ts'
import { dataTable } from './table.ts'

interface Common {
  csrf: string
  email: string
  notice?: Notice | undefined
}

export interface OrderFilters {
  status: string
  /** A pet's id, as typed ('' for any pet). */
  pet: string
}

const STATUS_STYLE: Record<string, string> = { placed: 'pending', approved: 'sold', delivered: 'active' }

function statusBadge(status: string): Html {
  return html`<span class="badge ${STATUS_STYLE[status] ?? ''}">${status}</span>`
}

/** The pet an order names, linked while it exists (deleting a pet keeps its orders). */
function petOf(order: Order, petNames: Map<number, string>): Html {
  const name = petNames.get(order.petId)
  return name === undefined
    ? html`<span class="mono">#${order.petId}</span><span class="sub">deleted</span>`
    : html`<a href="/dashboard/pets/${order.petId}">${name}</a> <span class="sub mono">#${order.petId}</span>`
}

export function ordersPage(
  input: Common & {
    orders: Order[]
    petNames: Map<number, string>
    filters: OrderFilters
    hasNewer: boolean
    hasOlder: boolean
  },
): string {
  const f = input.filters
  const filtered = f.status !== '' || f.pet !== ''
  return appPage({
    title: 'Orders',
    lead: 'Every store order in your account, newest first.',
    active: 'orders',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<form class="card row" method="get" action="/dashboard/orders" role="search" aria-label="Filter orders">
  <div class="field">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">Any status</option>
      ${ORDER_STATUSES.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ''}>${s}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="pet">Pet ID</label>
    <input id="pet" name="pet" type="text" inputmode="numeric" pattern="[0-9]*" maxlength="16" value="${f.pet}" placeholder="Any pet">
  </div>
  <div class="actions">
    <button class="btn" type="submit">Filter</button>
    ${filtered ? html`<a class="btn secondary" href="/dashboard/orders">Clear</a>` : ''}
  </div>
</form>
${dataTable({
  caption: 'Orders',
  testId: 'orders-table',
  rows: input.orders,
  empty: {
    icon: 'cart',
    text: filtered
      ? 'No orders match these filters.'
      : html`No orders yet. Place one with <code>POST /v1/order</code> or <code>POST /v2/store/order</code>.`,
  },
  columns: [
    { label: 'ID', cell: (o) => html`<a class="mono" href="/dashboard/orders/${o.id}">${o.id}</a>` },
    { label: 'Pet', cell: (o) => petOf(o, input.petNames) },
    { label: 'Quantity', numeric: true, cell: (o) => o.quantity },
    {
      label: 'Status',
      cell: (o) => html`${statusBadge(o.status)}${o.complete ? html`<span class="sub">complete</span>` : ''}`,
    },
    { label: 'Ship date', cell: (o) => when(o.shipDate, '—') },
    { label: 'Placed', cell: (o) => when(o.createdAt) },
  ],
})}
${pageLinks('/dashboard/orders', { status: f.status, pet: f.pet }, input.orders[0] === undefined ? null : String(input.orders[0].id), input.orders.at(-1) === undefined ? null : String(input.orders.at(-1)?.id), input.hasNewer, input.hasOlder)}`,
  })
}

export function orderPage(input: Common & { order: Order; petNames: Map<number, string> }): string {
  const o = input.order
  return appPage({
    title: `Order ${o.id}`,
    crumbs: html`<a href="/dashboard/orders">Orders</a> / #${o.id}`,
    active: 'orders',
    email: input.email,
    csrf: input.csrf,
    headActions: statusBadge(o.status),
    body: html`<div class="two-col">
<section class="card" aria-labelledby="order-h">
  <h2 id="order-h">Details</h2>
  <dl class="props">
    <dt>ID</dt><dd class="mono">${o.id}</dd>
    <dt>Pet</dt><dd>${petOf(o, input.petNames)}</dd>
    <dt>Quantity</dt><dd>${o.quantity}</dd>
    <dt>Status</dt><dd>${statusBadge(o.status)}</dd>
    <dt>Complete</dt><dd>${o.complete ? 'Yes' : 'No'}</dd>
    <dt>Ship date</dt><dd>${when(o.shipDate, '—')}</dd>
    <dt>Version</dt><dd>${o.version}</dd>
    <dt>Placed</dt><dd>${when(o.createdAt)}</dd>
    <dt>Updated</dt><dd>${when(o.updatedAt)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="json-h">
  <h2 id="json-h">In the API</h2>
  <p class="lead">What <code>GET /v1/order/${o.id}</code> answers:</p>
  <div class="code"><pre data-testid="order-json"><code>${JSON.stringify(toOrderV1(o), null, 2)}</code></pre></div>
</section>
</div>`,
  })
}
