import type { Scope } from '../../access/scopes.ts'
import type { ApiKeyInfo } from '../../keys/keys-service.ts'
import { fieldState } from '../../web/field-state.ts'
import { type Html, html } from '../../web/html.ts'
import { icon } from '../../web/icons.ts'
import { csrfField, type Notice } from '../../web/layout.ts'
import { examples } from './examples.ts'
import { appPage, when } from './layout.ts'
import { scopeBadges, scopeCheckboxes } from './scopes.ts'
import { dataTable } from './table.ts'

export const EXPIRY_CHOICES: { value: string; label: string; days: number | null }[] = [
  { value: 'never', label: 'Never', days: null },
  { value: '1', label: 'In 1 day', days: 1 },
  { value: '7', label: 'In 7 days', days: 7 },
  { value: '30', label: 'In 30 days', days: 30 },
  { value: '90', label: 'In 90 days', days: 90 },
  { value: '365', label: 'In 1 year', days: 365 },
]

export const ROLL_CHOICES: { value: string; label: string; hours: number }[] = [
  { value: 'now', label: 'Immediately', hours: 0 },
  { value: '1h', label: 'In 1 hour', hours: 1 },
  { value: '24h', label: 'In 24 hours', hours: 24 },
  { value: '3d', label: 'In 3 days', hours: 72 },
  { value: '7d', label: 'In 7 days', hours: 168 },
]

type KeyState = 'active' | 'expiring' | 'expired' | 'revoked'

export function keyState(key: ApiKeyInfo, now = Date.now()): KeyState {
  if (key.revoked_at !== null) return 'revoked'
  if (key.expires_at !== null) return Date.parse(key.expires_at) <= now ? 'expired' : 'expiring'
  return 'active'
}

function stateBadge(key: ApiKeyInfo): Html {
  const state = keyState(key)
  const label = { active: 'Active', expiring: 'Expires', expired: 'Expired', revoked: 'Revoked' }[state]
  if (state === 'expiring') return html`<span class="badge expiring">Expires</span> ${when(key.expires_at)}`
  return html`<span class="badge ${state}">${label}</span>`
}

export interface KeyFormValues {
  name: string
  expiry: string
  scopes: Scope[]
  /** The field that was refused: it takes the focus. */
  failed?: 'expiry' | 'scopes'
}

function createForm(csrf: string, values: KeyFormValues | undefined): Html {
  return html`<section class="card" aria-labelledby="create-h">
  <h2 id="create-h">Create a secret key</h2>
  <p class="lead">Keys authenticate your server's calls to the API. Give each integration its own key, so you can revoke one without touching the others.</p>
  <form class="stack" method="post" action="/dashboard/keys">
    ${csrfField(csrf)}
    <div class="row">
      <div class="field">
        <label for="name">Label</label>
        <input id="name" name="name" type="text" maxlength="100" placeholder="e.g. Production server" value="${values?.name ?? ''}" aria-describedby="name-hint">
        <p class="hint" id="name-hint">Only you see it; it helps you tell keys apart.</p>
      </div>
      <div class="field">
        <label for="expiry">Expires</label>
        <select id="expiry" name="expiry" aria-describedby="expiry-hint"${fieldState('expiry', values?.failed)}>
          ${EXPIRY_CHOICES.map((c) => html`<option value="${c.value}"${values?.expiry === c.value ? html` selected` : ''}>${c.label}</option>`)}
        </select>
        <p class="hint" id="expiry-hint">After that the API refuses the key.</p>
      </div>
    </div>
    ${scopeCheckboxes({
      legend: 'Permissions',
      hint: 'Tick what this key may do. All ticked means full access, including permissions added later.',
      chosen: values?.scopes,
      failed: values?.failed,
    })}
    <div class="actions"><button class="btn" type="submit">${icon('plus')}Create key</button></div>
  </form>
</section>`
}

function keysTable(keys: ApiKeyInfo[]): Html {
  const live = (k: ApiKeyInfo) => keyState(k) === 'active' || keyState(k) === 'expiring'
  return dataTable({
    caption: 'Your API keys',
    rows: keys,
    empty: { icon: 'key', text: 'No API keys yet. Create your first one above.' },
    rowAttributes: (k) => html`${live(k) ? '' : html` class="inactive"`} data-key-id="${k.id}"`,
    columns: [
      {
        label: 'Key',
        cell: (k) => html`<strong>${k.name}</strong><span class="sub mono">${k.redacted}</span>`,
      },
      { label: 'Permissions', cell: (k) => scopeBadges(k.scopes) },
      { label: 'Created', cell: (k) => when(k.created_at) },
      { label: 'Last used', cell: (k) => when(k.last_used_at) },
      { label: 'Status', cell: stateBadge },
      {
        label: 'Actions',
        hiddenLabel: true,
        numeric: true,
        cell: (k) =>
          live(k)
            ? html`<span class="actions"><a class="btn secondary small" href="/dashboard/keys/${k.id}/roll" aria-label="Roll ${k.name}">Roll</a><a class="btn secondary small" href="/dashboard/keys/${k.id}/revoke" aria-label="Revoke ${k.name}">Revoke</a></span>`
            : '',
      },
    ],
  })
}

export function keysPage(input: {
  csrf: string
  email: string
  keys: ApiKeyInfo[]
  notice?: Notice | undefined
  values?: KeyFormValues
}): string {
  return appPage({
    title: 'API keys',
    lead: 'Secret keys for the v1 API (and the api_key header on v2).',
    active: 'keys',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`${createForm(input.csrf, input.values)}
<section aria-labelledby="list-h">
  <h2 id="list-h">Your keys</h2>
  ${keysTable(input.keys)}
</section>`,
  })
}

export function newKeyPage(input: {
  csrf: string
  email: string
  apiKey: string
  info: ApiKeyInfo
  baseUrl: string
  rolledFrom?: { info: ApiKeyInfo; expiresAt: string | null }
}): string {
  const rolled = input.rolledFrom
  return appPage({
    title: rolled === undefined ? 'Your new secret key' : 'Key rolled',
    crumbs: html`<a href="/dashboard/keys">API keys</a>`,
    active: 'keys',
    email: input.email,
    csrf: input.csrf,
    notice: {
      kind: 'warning',
      text: html`<strong>Copy this key now.</strong> It is shown only this once: we keep just a hash of it. If you lose it, roll or revoke it and create another.`,
    },
    body: html`<section class="card" aria-labelledby="secret-h">
  <h2 id="secret-h">${input.info.name}</h2>
  <p class="lead">${scopeBadges(input.info.scopes)} ${
    input.info.expires_at === null ? 'Never expires.' : html`Expires ${when(input.info.expires_at)}.`
  }</p>
  <label class="visually-hidden" for="new-key">Secret key</label>
  <div class="secret"><output id="new-key" data-testid="new-key">${input.apiKey}</output><button type="button" class="btn-copy" data-copy="new-key" hidden>Copy</button></div>
  ${
    rolled === undefined
      ? ''
      : html`<p>The old key <span class="mono">${rolled.info.redacted}</span> ${
          rolled.expiresAt === null
            ? 'was revoked and no longer works.'
            : html`keeps working until ${when(rolled.expiresAt)}, so you can deploy the new one first.`
        }</p>`
  }
  <div class="actions"><a class="btn" href="/dashboard/keys">I have stored it safely</a></div>
</section>
<section class="card" aria-labelledby="try-h">
  <h2 id="try-h">Try it</h2>
  <p class="lead">Create a pet with your new key:</p>
  ${examples(input.baseUrl, input.apiKey, 'new')}
</section>`,
  })
}

export function revokeKeyPage(input: { csrf: string; email: string; key: ApiKeyInfo }): string {
  return appPage({
    title: 'Revoke API key',
    crumbs: html`<a href="/dashboard/keys">API keys</a>`,
    active: 'keys',
    email: input.email,
    csrf: input.csrf,
    body: html`<section class="card">
  <h2>Revoke “${input.key.name}”?</h2>
  <p>Key <span class="mono">${input.key.redacted}</span>, created ${when(input.key.created_at)}, last used ${when(input.key.last_used_at)}.</p>
  <div class="notice error" role="note">${icon('alert')}<div><p>Every request that uses this key will be refused with 401 from the moment you confirm. This cannot be undone.</p></div></div>
  <form method="post" action="/dashboard/keys/${input.key.id}/revoke" class="actions">
    ${csrfField(input.csrf)}
    <button class="btn danger" type="submit">Revoke key</button>
    <a class="btn secondary" href="/dashboard/keys">Cancel</a>
  </form>
</section>`,
  })
}

export function rollKeyPage(input: { csrf: string; email: string; key: ApiKeyInfo }): string {
  return appPage({
    title: 'Roll API key',
    crumbs: html`<a href="/dashboard/keys">API keys</a>`,
    active: 'keys',
    email: input.email,
    csrf: input.csrf,
    body: html`<section class="card">
  <h2>Roll “${input.key.name}”</h2>
  <p class="lead">Rolling creates a new key with the same label and permissions and retires <span class="mono">${input.key.redacted}</span> when you choose, so you can switch over without downtime.</p>
  <form method="post" action="/dashboard/keys/${input.key.id}/roll" class="stack">
    ${csrfField(input.csrf)}
    <div class="field">
      <label for="expire">The old key stops working</label>
      <select id="expire" name="expire">
        ${ROLL_CHOICES.map((c) => html`<option value="${c.value}"${c.value === '24h' ? html` selected` : ''}>${c.label}</option>`)}
      </select>
    </div>
    <div class="actions">
      <button class="btn" type="submit">Roll key</button>
      <a class="btn secondary" href="/dashboard/keys">Cancel</a>
    </div>
  </form>
</section>`,
  })
}
