import { EVENT_TYPES, EVENT_WILDCARDS, type EventV1 } from '../../events/event.ts'
import { html } from '../../web/html.ts'
import type { Notice } from '../../web/layout.ts'
import { pageLinks } from './data-views.ts'
import { appPage, when } from './layout.ts'
import { dataTable } from './table.ts'

interface Common {
  csrf: string
  email: string
  notice?: Notice | undefined
}

/** The choices of the type filter: every family's wildcard, then each type. */
export const EVENT_TYPE_CHOICES = [...EVENT_WILDCARDS, ...EVENT_TYPES]

/** Where the object an event is about is shown in the dashboard, if it still exists there. */
function objectLink(event: EventV1): string | undefined {
  const id = event.data.object.id
  if (event.type.endsWith('.deleted') || id === undefined) return undefined
  if (event.type.startsWith('pet.')) return `/dashboard/pets/${String(id)}`
  if (event.type.startsWith('user.')) return `/dashboard/users/${String(id)}`
  return undefined
}

export function eventsPage(
  input: Common & { events: EventV1[]; type: string; hasNewer: boolean; hasOlder: boolean },
): string {
  return appPage({
    title: 'Events',
    lead: 'What changed in your account, newest first (kept for a limited time).',
    active: 'events',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<form class="card row" method="get" action="/dashboard/events" role="search" aria-label="Filter events">
  <div class="field">
    <label for="type">Type</label>
    <select id="type" name="type">
      <option value="">Any type</option>
      ${EVENT_TYPE_CHOICES.map((t) => html`<option value="${t}"${input.type === t ? html` selected` : ''}>${t}</option>`)}
    </select>
  </div>
  <div class="actions">
    <button class="btn" type="submit">Filter</button>
    ${input.type === '' ? '' : html`<a class="btn secondary" href="/dashboard/events">Clear</a>`}
  </div>
</form>
${dataTable({
  caption: 'Events',
  testId: 'events-table',
  rows: input.events,
  empty: {
    icon: 'info',
    text:
      input.type === ''
        ? 'No events yet: they appear as you create and change pets and users.'
        : 'No events of this type.',
  },
  columns: [
    {
      label: 'Type',
      cell: (e) => html`<a href="/dashboard/events/${e.id}"><span class="badge">${e.type}</span></a>`,
    },
    {
      label: 'Object',
      cell: (e) =>
        html`<span class="mono">${e.data.object.id === undefined ? '' : String(e.data.object.id)}</span>`,
    },
    { label: 'Event', cell: (e) => html`<a class="mono" href="/dashboard/events/${e.id}">${e.id}</a>` },
    { label: 'When', cell: (e) => when(e.created_at) },
  ],
})}
${pageLinks('/dashboard/events', { type: input.type }, input.events[0]?.id ?? null, input.events.at(-1)?.id ?? null, input.hasNewer, input.hasOlder)}`,
  })
}

export function eventPage(input: Common & { event: EventV1 }): string {
  const e = input.event
  const link = objectLink(e)
  const objectId = e.data.object.id === undefined ? '—' : String(e.data.object.id)
  return appPage({
    title: e.type,
    crumbs: html`<a href="/dashboard/events">Events</a> / <span class="mono">${e.id}</span>`,
    active: 'events',
    email: input.email,
    csrf: input.csrf,
    body: html`<div class="two-col">
<section class="card" aria-labelledby="event-h">
  <h2 id="event-h">Details</h2>
  <dl class="props">
    <dt>ID</dt><dd class="mono">${e.id}</dd>
    <dt>Type</dt><dd><span class="badge">${e.type}</span></dd>
    <dt>Object</dt><dd>${link === undefined ? html`<span class="mono">${objectId}</span>` : html`<a class="mono" href="${link}">${objectId}</a>`}</dd>
    <dt>When</dt><dd>${when(e.created_at)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="json-h">
  <h2 id="json-h">JSON</h2>
  <p class="lead">What <code>GET /v1/event/${e.id}</code> answers, and what webhooks receive:</p>
  <div class="code"><pre data-testid="event-json"><code>${JSON.stringify(e, null, 2)}</code></pre></div>
</section>
</div>`,
  })
}
