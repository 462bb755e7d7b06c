import type { Pet } from '../../pets/pet.ts'
import { PET_STATUSES } from '../../pets/pet-status.ts'
import { toPetV1 } from '../../pets/pet-views.ts'
import type { User } from '../../users/user.ts'
import { type Html, html } from '../../web/html.ts'
import { icon } from '../../web/icons.ts'
import type { Notice } from '../../web/layout.ts'
import { examples } from './examples.ts'
import { appPage, when } from './layout.ts'
import { dataTable } from './table.ts'

interface Common {
  csrf: string
  email: string
  notice?: Notice | undefined
}

function statusBadge(status: string): Html {
  return html`<span class="badge ${status}"><span class="dot ${status}"></span>${status}</span>`
}

function statCards(counts: Record<string, number>, users: number): Html {
  const total = PET_STATUSES.reduce((n, s) => n + (counts[s] ?? 0), 0)
  return html`<div class="grid" aria-label="Counts at a glance">
  <a class="stat" href="/dashboard/pets"><span class="label">${icon('paw')}All pets</span><span class="value" data-testid="count-total">${total}</span></a>
  ${PET_STATUSES.map(
    (s) =>
      html`<a class="stat" href="/dashboard/pets?status=${s}"><span class="label"><span class="dot ${s}"></span>${s[0]?.toUpperCase()}${s.slice(1)}</span><span class="value" data-testid="count-${s}">${counts[s] ?? 0}</span></a>`,
  )}
  <a class="stat" href="/dashboard/users"><span class="label">${icon('users')}Users</span><span class="value">${users}</span></a>
</div>`
}

export function overviewPage(
  input: Common & {
    counts: Record<string, number>
    users: number
    activeKeys: number
    baseUrl: string
    mode: 'live' | 'sandbox'
  },
): string {
  return appPage({
    title: 'Overview',
    lead: 'Your pets at a glance, and everything you need to call the API.',
    active: 'overview',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`${statCards(input.counts, input.users)}
<section class="card" aria-labelledby="start-h">
  <h2 id="start-h">Getting started</h2>
  <p class="lead">Your API lives at <code data-testid="base-url">${input.baseUrl}</code>. Authenticate with a secret key as the HTTP Basic user name and an empty password.</p>
  <ol>
    <li>${
      input.activeKeys === 0
        ? html`<a href="/dashboard/keys">Create an API key</a> (you have none yet).`
        : html`You have ${input.activeKeys} active API key${input.activeKeys === 1 ? '' : 's'}; <a href="/dashboard/keys">manage them</a>.`
    }</li>
    <li>Keep it in an environment variable, <code>PET_SERVICE_API_KEY</code>, never in your code.</li>
    <li>Run one of these, then watch the pet appear under <a href="/dashboard/pets">Pets</a>.</li>
  </ol>
  ${examples(input.baseUrl, undefined, 'ex', input.mode)}
  <p class="hint">Every endpoint, with request and response schemas: <a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI document</a>.</p>
</section>`,
  })
}

export interface PetFilters {
  status: string
  species: string
  owner: string
}

export function pageLinks(
  path: string,
  params: Record<string, string>,
  first: string | null,
  last: string | null,
  hasNewer: boolean,
  hasOlder: boolean,
): Html {
  const link = (cursor: Record<string, string>) => {
    const q = new URLSearchParams({
      ...Object.fromEntries(Object.entries(params).filter(([, v]) => v !== '')),
      ...cursor,
    })
    return `${path}?${q.toString()}`
  }
  if ((!hasNewer && !hasOlder) || first === null) return html``
  return html`<nav class="pager" aria-label="Pages">
  <span></span>
  <span class="actions">
    ${
      hasNewer && first !== null
        ? html`<a class="btn secondary small" href="${link({ ending_before: first })}" rel="prev">← Newer</a>`
        : html`<a class="btn secondary small" aria-disabled="true">← Newer</a>`
    }
    ${
      hasOlder && last !== null
        ? html`<a class="btn secondary small" href="${link({ starting_after: last })}" rel="next">Older →</a>`
        : html`<a class="btn secondary small" aria-disabled="true">Older →</a>`
    }
  </span>
</nav>`
}

export function petsPage(
  input: Common & {
    pets: Pet[]
    counts: Record<string, number>
    filters: PetFilters
    species: string[]
    owners: { id: string; name: string }[]
    ownerNames: Map<string, string>
    hasNewer: boolean
    hasOlder: boolean
  },
): string {
  const f = input.filters
  const filtered = f.status !== '' || f.species !== '' || f.owner !== ''
  return appPage({
    title: 'Pets',
    lead: 'Every pet in your account, newest first.',
    active: 'pets',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<form class="card row" method="get" action="/dashboard/pets" role="search" aria-label="Filter pets">
  <div class="field">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">Any status</option>
      ${PET_STATUSES.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ''}>${s} (${input.counts[s] ?? 0})</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="species">Species</label>
    <select id="species" name="species">
      <option value="">Any species</option>
      ${input.species.map((s) => html`<option${f.species === s ? html` selected` : ''}>${s}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="owner">Owner</label>
    <select id="owner" name="owner">
      <option value="">Anyone</option>
      ${input.owners.map((o) => html`<option value="${o.id}"${f.owner === o.id ? html` selected` : ''}>${o.name}</option>`)}
    </select>
  </div>
  <div class="actions">
    <button class="btn" type="submit">Filter</button>
    ${filtered ? html`<a class="btn secondary" href="/dashboard/pets">Clear</a>` : ''}
  </div>
</form>
${dataTable({
  caption: 'Pets',
  testId: 'pets-table',
  rows: input.pets,
  empty: {
    icon: 'paw',
    text: filtered
      ? 'No pets match these filters.'
      : html`No pets yet. Create one with the API: see <a href="/dashboard">Getting started</a>.`,
  },
  columns: [
    { label: 'ID', cell: (p) => html`<a class="mono" href="/dashboard/pets/${p.id}">${p.id}</a>` },
    { label: 'Name', cell: (p) => html`<a href="/dashboard/pets/${p.id}"><strong>${p.name}</strong></a>` },
    {
      label: 'Species',
      cell: (p) =>
        html`${p.species ?? '—'}${p.breed === null ? '' : html`<span class="sub">${p.breed}</span>`}`,
    },
    {
      label: 'Owner',
      cell: (p) =>
        p.ownerId === null
          ? '—'
          : html`<a href="/dashboard/users/${p.ownerId}">${input.ownerNames.get(p.ownerId) ?? p.ownerId}</a>`,
    },
    { label: 'Status', cell: (p) => statusBadge(p.status) },
    { label: 'Updated', cell: (p) => when(p.updatedAt) },
  ],
})}
${pageLinks('/dashboard/pets', { status: f.status, species: f.species, owner: f.owner }, input.pets[0] === undefined ? null : String(input.pets[0].id), input.pets.at(-1) === undefined ? null : String(input.pets.at(-1)?.id), input.hasNewer, input.hasOlder)}`,
  })
}

function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2)
}

export function petPage(input: Common & { pet: Pet; owner: User | undefined; baseUrl: string }): string {
  const p = input.pet
  const safeUrl = (u: string) => /^https?:\/\//i.test(u)
  return appPage({
    title: p.name,
    crumbs: html`<a href="/dashboard/pets">Pets</a> / #${p.id}`,
    active: 'pets',
    email: input.email,
    csrf: input.csrf,
    headActions: statusBadge(p.status),
    body: html`<div class="two-col">
<section class="card" aria-labelledby="pet-h">
  <h2 id="pet-h">Details</h2>
  <dl class="props">
    <dt>ID</dt><dd class="mono">${p.id}</dd>
    <dt>Name</dt><dd>${p.name}</dd>
    <dt>Species</dt><dd>${p.species ?? '—'}</dd>
    <dt>Breed</dt><dd>${p.breed ?? '—'}</dd>
    <dt>Status</dt><dd>${statusBadge(p.status)}</dd>
    <dt>Owner</dt><dd>${
      p.ownerId === null
        ? '—'
        : html`<a href="/dashboard/users/${p.ownerId}">${input.owner?.name ?? p.ownerId}</a> <span class="mono sub">${p.ownerId}</span>`
    }</dd>
    <dt>Category</dt><dd>${p.category?.name ?? '—'}</dd>
    <dt>Tags</dt><dd>${
      p.tags === null || p.tags.length === 0
        ? '—'
        : html`<span class="badges">${p.tags.map((t) => html`<span class="badge">${t.name ?? t.id ?? ''}</span>`)}</span>`
    }</dd>
    <dt>Photos</dt><dd>${
      p.photoUrls.length === 0
        ? '—'
        : html`<ul>${p.photoUrls.map((u) => html`<li>${safeUrl(u) ? html`<a href="${u}" rel="noopener noreferrer nofollow">${u}</a>` : u}</li>`)}</ul>`
    }</dd>
    <dt>Version</dt><dd>${p.version}</dd>
    <dt>Created</dt><dd>${when(p.createdAt)}</dd>
    <dt>Updated</dt><dd>${when(p.updatedAt)}</dd>
    <dt>Orders</dt><dd><a href="/dashboard/orders?pet=${p.id}">Orders of ${p.name}</a></dd>
  </dl>
</section>
<section class="card" aria-labelledby="api-h">
  <h2 id="api-h">In the API</h2>
  <p class="lead">Fetch this pet with your key:</p>
  <div class="code"><pre id="pet-curl"><code>curl -u $PET_SERVICE_API_KEY: ${input.baseUrl}/v1/pet/${p.id}</code></pre><button type="button" class="btn-copy" data-copy="pet-curl" hidden>Copy</button></div>
  <p class="lead">What <code>GET /v1/pet/${p.id}</code> answers:</p>
  <div class="code"><pre><code>${jsonText(toPetV1(p))}</code></pre></div>
</section>
</div>`,
  })
}

export function usersPage(
  input: Common & {
    users: User[]
    petCounts: Map<string, number>
    email_filter: string
    total: number
    hasNewer: boolean
    hasOlder: boolean
  },
): string {
  return appPage({
    title: 'Users',
    lead: `The pet owners in your account (${input.total}).`,
    active: 'users',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<form class="card row" method="get" action="/dashboard/users" role="search" aria-label="Filter users">
  <div class="field">
    <label for="email-filter">Email</label>
    <input id="email-filter" name="email" type="search" value="${input.email_filter}" placeholder="owner@example.com">
  </div>
  <div class="actions"><button class="btn" type="submit">Filter</button>${input.email_filter === '' ? '' : html`<a class="btn secondary" href="/dashboard/users">Clear</a>`}</div>
</form>
${dataTable({
  caption: 'Users',
  testId: 'users-table',
  rows: input.users,
  empty: {
    icon: 'users',
    text:
      input.email_filter === ''
        ? html`No users yet. Create pet owners with <code>POST /v1/user</code>.`
        : 'No user has this email.',
  },
  columns: [
    {
      label: 'Name',
      cell: (u) =>
        html`<a href="/dashboard/users/${u.id}"><strong>${u.name}</strong></a><span class="sub mono">${u.id}</span>`,
    },
    { label: 'Email', cell: (u) => u.email ?? '—' },
    { label: 'Phone', cell: (u) => u.phone ?? '—' },
    { label: 'Pets', numeric: true, cell: (u) => input.petCounts.get(u.id) ?? 0 },
    { label: 'Created', cell: (u) => when(u.createdAt) },
  ],
})}
${pageLinks('/dashboard/users', { email: input.email_filter }, input.users[0]?.id ?? null, input.users.at(-1)?.id ?? null, input.hasNewer, input.hasOlder)}`,
  })
}

export function userPage(input: Common & { user: User; pets: Pet[]; hasMore: boolean }): string {
  const u = input.user
  return appPage({
    title: u.name,
    crumbs: html`<a href="/dashboard/users">Users</a>`,
    active: 'users',
    email: input.email,
    csrf: input.csrf,
    body: html`<div class="two-col">
<section class="card" aria-labelledby="user-h">
  <h2 id="user-h">Details</h2>
  <dl class="props">
    <dt>ID</dt><dd class="mono">${u.id}</dd>
    <dt>Name</dt><dd>${u.name}</dd>
    <dt>Email</dt><dd>${u.email ?? '—'}</dd>
    <dt>Phone</dt><dd>${u.phone ?? '—'}</dd>
    <dt>Version</dt><dd>${u.version}</dd>
    <dt>Created</dt><dd>${when(u.createdAt)}</dd>
    <dt>Updated</dt><dd>${when(u.updatedAt)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="owned-h">
  <h2 id="owned-h">Pets</h2>
  ${
    input.pets.length === 0
      ? html`<p class="lead">No pets belong to ${u.name}.</p>`
      : html`<ul class="scope-list">${input.pets.map((p) => html`<li>${icon('paw')}<span><a href="/dashboard/pets/${p.id}">${p.name}</a> ${statusBadge(p.status)}</span></li>`)}</ul>
  ${input.hasMore ? html`<p><a href="/dashboard/pets?owner=${u.id}">All of ${u.name}'s pets →</a></p>` : ''}`
  }
</section>
</div>`,
  })
}
