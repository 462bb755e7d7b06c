import { EVENT_TYPES, EVENT_WILDCARDS } from '../../events/event.ts'
import { fieldState } from '../../web/field-state.ts'
import { type Html, html } from '../../web/html.ts'
import { csrfField, type Notice } from '../../web/layout.ts'
import type { WebhookDeliveryV1, WebhookEndpointV1 } from '../../webhooks/webhook-endpoint.ts'
import { appPage, when } from './layout.ts'
import { dataTable } from './table.ts'

interface Common {
  csrf: string
  email: string
  notice?: Notice | undefined
}

/** The reason the service gives when the account holder disabled an endpoint themselves. */
const DISABLED_BY_HOLDER = 'Disabled by the account holder.'

/** What a subscription may name: everything, a family, or one type. */
export const EVENT_CHOICES = ['*', ...EVENT_WILDCARDS, ...EVENT_TYPES]

export const ROTATE_CHOICES: { value: string; label: string; hours: number }[] = [
  { value: '0', label: 'Immediately', hours: 0 },
  { value: '1', label: 'In 1 hour', hours: 1 },
  { value: '24', label: 'In 24 hours', hours: 24 },
  { value: '72', label: 'In 3 days', hours: 72 },
]

/** An endpoint the service disabled because its deliveries kept failing. */
export function disabledForFailing(e: WebhookEndpointV1): boolean {
  return e.status === 'disabled' && e.disabled_reason !== null && e.disabled_reason !== DISABLED_BY_HOLDER
}

function statusBadge(e: WebhookEndpointV1): Html {
  return e.status === 'enabled'
    ? html`<span class="badge active"><span class="dot available"></span>enabled</span>`
    : html`<span class="badge revoked">${disabledForFailing(e) ? 'disabled: failing' : 'disabled'}</span>`
}

function eventBadges(e: WebhookEndpointV1): Html {
  return html`<span class="badges">${e.enabled_events.map((t) => html`<span class="badge">${t}</span>`)}</span>`
}

function failingNotice(endpoints: WebhookEndpointV1[]): Notice | undefined {
  const failing = endpoints.filter(disabledForFailing)
  if (failing.length === 0) return undefined
  return {
    kind: 'warning',
    text: html`${failing.length === 1 ? 'An endpoint was' : `${failing.length} endpoints were`} disabled because deliveries kept failing: ${failing.map(
      (e, i) =>
        html`${i > 0 ? ', ' : ''}<a href="/dashboard/webhooks/${e.id}">${e.url}</a> (${e.disabled_reason ?? ''})`,
    )}. Fix the receiver, then enable the endpoint again.`,
  }
}

export function webhooksPage(
  input: Common & {
    endpoints: WebhookEndpointV1[]
    /** What the refused form held, and the field that failed (it takes the focus). */
    values?: { url: string; events: string[]; description: string; failed?: string | undefined }
  },
): string {
  const values = input.values ?? { url: '', events: ['*'], description: '' }
  return appPage({
    title: 'Webhooks',
    lead: 'Endpoints of yours that receive signed events as they happen (Standard Webhooks).',
    active: 'webhooks',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice ?? failingNotice(input.endpoints),
    body: html`${dataTable({
      caption: 'Webhook endpoints',
      testId: 'webhooks-table',
      rows: input.endpoints,
      empty: { icon: 'info', text: 'No webhook endpoints yet. Add one below.' },
      columns: [
        {
          label: 'URL',
          cell: (e) =>
            html`<a href="/dashboard/webhooks/${e.id}"><strong>${e.url}</strong></a><span class="sub mono">${e.id}</span>${e.description === null ? '' : html`<span class="sub">${e.description}</span>`}`,
        },
        { label: 'Events', cell: eventBadges },
        { label: 'Status', cell: statusBadge },
        { label: 'Created', cell: (e) => when(e.created_at) },
      ],
    })}
<section class="card" aria-labelledby="new-h">
  <h2 id="new-h">Add an endpoint</h2>
  <form class="stack" method="post" action="/dashboard/webhooks">${csrfField(input.csrf)}
    <div class="field">
      <label for="url">Endpoint URL</label>
      <input id="url" name="url" type="url" required maxlength="2048" value="${values.url}" placeholder="https://example.com/webhooks"${fieldState('url', values.failed)}>
    </div>
    <fieldset class="field">
      <legend>Events to send</legend>
      ${EVENT_CHOICES.map(
        (t, i) =>
          html`<label class="check"><input type="checkbox" name="enabled_events" value="${t}"${values.events.includes(t) ? html` checked` : ''}${i === 0 ? fieldState('enabled_events', values.failed) : ''}><span class="mono">${t === '*' ? '* (every event)' : t}</span></label>`,
      )}
    </fieldset>
    <div class="field">
      <label for="description">Description (optional)</label>
      <input id="description" name="description" type="text" maxlength="200" value="${values.description}"${fieldState('description', values.failed)}>
    </div>
    <div class="actions"><button class="btn" type="submit">Add endpoint</button></div>
  </form>
</section>`,
  })
}

export function webhookSecretPage(input: Common & { endpoint: WebhookEndpointV1; rotated?: string }): string {
  const e = input.endpoint
  return appPage({
    title: input.rotated === undefined ? 'Endpoint added' : 'Secret rotated',
    crumbs: html`<a href="/dashboard/webhooks">Webhooks</a>`,
    active: 'webhooks',
    email: input.email,
    csrf: input.csrf,
    notice: {
      kind: 'warning',
      text: html`<strong>Copy this signing secret now.</strong> It is shown only this once. Your receiver verifies each delivery's <code>webhook-signature</code> with it.`,
    },
    body: html`<section class="card" aria-labelledby="secret-h">
  <h2 id="secret-h">${e.url}</h2>
  <label class="visually-hidden" for="new-secret">Signing secret</label>
  <div class="secret"><output id="new-secret" data-testid="new-secret">${e.secret ?? ''}</output><button type="button" class="btn-copy" data-copy="new-secret" hidden>Copy</button></div>
  ${input.rotated === undefined ? '' : html`<p>${input.rotated}</p>`}
  <div class="actions"><a class="btn" href="/dashboard/webhooks/${e.id}">I have stored it safely</a></div>
</section>`,
  })
}

export function webhookPage(
  input: Common & { endpoint: WebhookEndpointV1; deliveries: WebhookDeliveryV1[] },
): string {
  const e = input.endpoint
  const post = (action: string, label: string, extra: Html = html``, kind = 'secondary') =>
    html`<form method="post" action="/dashboard/webhooks/${e.id}/${action}">${csrfField(input.csrf)}${extra}<button class="btn ${kind}" type="submit">${label}</button></form>`
  const notice =
    input.notice ??
    (disabledForFailing(e)
      ? {
          kind: 'warning' as const,
          text: html`This endpoint was disabled because deliveries kept failing: ${e.disabled_reason ?? ''}. Fix the receiver, then enable it again.`,
        }
      : undefined)
  return appPage({
    title: e.url,
    crumbs: html`<a href="/dashboard/webhooks">Webhooks</a> / <span class="mono">${e.id}</span>`,
    active: 'webhooks',
    email: input.email,
    csrf: input.csrf,
    notice,
    headActions: statusBadge(e),
    body: html`<div class="two-col">
<section class="card" aria-labelledby="ep-h">
  <h2 id="ep-h">Details</h2>
  <dl class="props">
    <dt>ID</dt><dd class="mono">${e.id}</dd>
    <dt>URL</dt><dd class="mono">${e.url}</dd>
    <dt>Events</dt><dd>${eventBadges(e)}</dd>
    <dt>Description</dt><dd>${e.description ?? '—'}</dd>
    <dt>Status</dt><dd data-testid="endpoint-status">${e.status}${e.disabled_reason === null ? '' : html` — ${e.disabled_reason}`}</dd>
    <dt>Created</dt><dd>${when(e.created_at)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="act-h">
  <h2 id="act-h">Actions</h2>
  <div class="actions">
    ${post('test', 'Send test event')}
    ${e.status === 'enabled' ? post('status', 'Disable', html`<input type="hidden" name="status" value="disabled">`, 'danger') : post('status', 'Enable', html`<input type="hidden" name="status" value="enabled">`, '')}
  </div>
  ${post(
    'rotate',
    'Rotate secret',
    html`<div class="field"><label for="expire">The current secret keeps signing</label><select id="expire" name="expire_current_in_hours">${ROTATE_CHOICES.map((c) => html`<option value="${c.value}"${c.hours === 24 ? html` selected` : ''}>${c.label}</option>`)}</select></div>`,
  )}
</section>
</div>
<section class="card" aria-labelledby="log-h">
  <h2 id="log-h">Delivery log</h2>
  ${dataTable({
    caption: 'Delivery attempts, newest first',
    testId: 'deliveries-table',
    rows: input.deliveries,
    empty: { icon: 'info', text: 'No deliveries yet.' },
    columns: [
      { label: 'When', cell: (d) => when(d.attempted_at) },
      {
        label: 'Event',
        cell: (d) =>
          html`${d.event_type === 'webhook.test' ? html`<span class="mono">${d.event_type}</span>` : html`<a class="mono" href="/dashboard/events/${d.event_id}">${d.event_type}</a>`}<span class="sub mono">${d.event_id}</span>`,
      },
      { label: 'Attempt', numeric: true, cell: (d) => `#${d.attempt}` },
      {
        label: 'Status',
        cell: (d) =>
          html`<span class="badge ${d.status === 'succeeded' ? 'active' : d.status === 'failed' ? 'revoked' : 'pending'}">${d.status}</span>`,
      },
      {
        label: 'Answer or error',
        cell: (d) =>
          html`${d.response_status ?? 'No answer'}${d.latency_ms === null ? '' : ` in ${d.latency_ms} ms`}<code class="sub">${(d.error ?? d.response_body_excerpt ?? '').slice(0, 120)}</code>`,
      },
      {
        label: 'Actions',
        hiddenLabel: true,
        numeric: true,
        cell: (d) =>
          d.event_type === 'webhook.test'
            ? ''
            : post('resend', 'Resend', html`<input type="hidden" name="event_id" value="${d.event_id}">`),
      },
    ],
  })}
</section>`,
  })
}
