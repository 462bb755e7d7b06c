import { type RequestLogV1, STATUS_CLASSES } from '../../request-logs/request-log.ts'
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

/** The Logs page's filters, as its form and its links carry them. */
export interface LogFilters {
  status_class: string
  method: string
  path: string
  credential_id: string
  request_id: string
}

export const LOG_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const

const statusBadge = (status: number) =>
  html`<span class="badge ${status >= 500 ? 'revoked' : status >= 400 ? 'pending' : 'active'}">${String(status)}</span>`

const credentialOf = (e: RequestLogV1) => e.api_key_id ?? e.oauth_client_id ?? ''

export function requestLogsPage(
  input: Common & { entries: RequestLogV1[]; filters: LogFilters; hasNewer: boolean; hasOlder: boolean },
): string {
  const f = input.filters
  const filtered = Object.values(f).some((v) => v !== '')
  const text = (name: keyof LogFilters, label: string, placeholder: string) =>
    html`<div class="field">
    <label for="${name}">${label}</label>
    <input id="${name}" name="${name}" value="${f[name]}" placeholder="${placeholder}" maxlength="200" autocomplete="off">
  </div>`
  return appPage({
    title: 'Logs',
    lead: 'The API requests of your account, newest first, kept for a limited time. Failures keep what was sent and answered, secrets redacted.',
    active: 'logs',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<form class="card row" method="get" action="/dashboard/logs" role="search" aria-label="Filter logs">
  <div class="field">
    <label for="status_class">Status</label>
    <select id="status_class" name="status_class">
      <option value="">Any status</option>
      ${STATUS_CLASSES.map((c) => html`<option value="${c}"${f.status_class === c ? html` selected` : ''}>${c}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="method">Method</label>
    <select id="method" name="method">
      <option value="">Any method</option>
      ${LOG_METHODS.map((m) => html`<option value="${m}"${f.method === m ? html` selected` : ''}>${m}</option>`)}
    </select>
  </div>
  ${text('path', 'Path begins with', '/v1/pet')}
  ${text('credential_id', 'Key or app', 'key_… or pet_ci_…')}
  ${text('request_id', 'Request ID', 'req_…')}
  <div class="actions">
    <button class="btn" type="submit">Filter</button>
    ${filtered ? html`<a class="btn secondary" href="/dashboard/logs">Clear</a>` : ''}
  </div>
</form>
${dataTable({
  caption: 'Request logs',
  testId: 'logs-table',
  rows: input.entries,
  empty: {
    icon: 'info',
    text: filtered
      ? 'No requests match these filters.'
      : 'No requests yet: they appear as your keys and apps call the API.',
  },
  columns: [
    { label: 'Status', cell: (e) => html`<a href="/dashboard/logs/${e.id}">${statusBadge(e.status)}</a>` },
    {
      label: 'Request',
      cell: (e) => html`<a class="mono" href="/dashboard/logs/${e.id}">${e.method} ${e.path}</a>`,
    },
    { label: 'Error', cell: (e) => html`<span class="mono">${e.error_code ?? ''}</span>` },
    { label: 'Key or app', cell: (e) => html`<span class="mono">${credentialOf(e)}</span>` },
    { label: 'When', cell: (e) => when(e.created_at) },
  ],
})}
${pageLinks('/dashboard/logs', { ...f }, input.entries[0]?.id ?? null, input.entries.at(-1)?.id ?? null, input.hasNewer, input.hasOlder)}`,
  })
}

export function requestLogPage(input: Common & { entry: RequestLogV1 }): string {
  const e = input.entry
  const block = (id: string, title: string, text: string | null) =>
    text === null
      ? ''
      : html`<section class="card" aria-labelledby="${id}-h">
  <h2 id="${id}-h">${title}</h2>
  <div class="code"><pre data-testid="${id}"><code>${pretty(text)}</code></pre></div>
</section>`
  return appPage({
    title: `${e.method} ${e.path}`,
    crumbs: html`<a href="/dashboard/logs">Logs</a> / <span class="mono">${e.id}</span>`,
    active: 'logs',
    email: input.email,
    csrf: input.csrf,
    body: html`<div class="two-col">
<section class="card" aria-labelledby="entry-h">
  <h2 id="entry-h">Details</h2>
  <dl class="props">
    <dt>Status</dt><dd>${statusBadge(e.status)}</dd>
    <dt>Error code</dt><dd class="mono">${e.error_code ?? '—'}</dd>
    <dt>Request ID</dt><dd class="mono">${e.request_id}</dd>
    <dt>${e.api_key_id === null ? 'OAuth app' : 'API key'}</dt><dd class="mono">${credentialOf(e) || '—'}</dd>
    <dt>API version</dt><dd>${e.api_version}</dd>
    <dt>Address</dt><dd class="mono">${e.client_address}</dd>
    <dt>Duration</dt><dd>${String(e.duration_ms)} ms</dd>
    <dt>When</dt><dd>${when(e.created_at)}</dd>
  </dl>
</section>
${
  e.status < 400
    ? html`<section class="card"><p class="lead">Bodies are kept for failures (4xx and 5xx) only.</p></section>`
    : html`${block('request-headers', 'Request headers', e.request_headers === null ? null : JSON.stringify(e.request_headers))}
${block('request-body', 'Request body', e.request_body)}
${block('response-body', 'Response body', e.response_body)}`
}
</div>`,
  })
}

/** JSON indented for reading; other text (a cut body) as it is. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
