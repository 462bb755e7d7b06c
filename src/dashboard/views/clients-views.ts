import type { Scope } from '../../access/scopes.ts'
import { fieldState } from '../../web/field-state.ts'
import { type Html, html } from '../../web/html.ts'
import { icon } from '../../web/icons.ts'
import { csrfField, type Notice } from '../../web/layout.ts'
import { codeBlock } from './examples.ts'
import { appPage, when } from './layout.ts'
import { scopeBadges, scopeCheckboxes } from './scopes.ts'
import { dataTable } from './table.ts'

/** What the client pages show of a client (never its secret hash). */
export interface ClientView {
  client_id: string
  name: string
  /** `public`: a browser or phone app, no secret (PKCE only). */
  client_type: 'confidential' | 'public'
  redirect_uris: string[]
  scopes: Scope[]
  created_at: string
}

/** An authorisation this account granted to an app (an oidc-provider Grant). */
export interface GrantView {
  id: string
  clientId: string
  clientName: string
  scopes: Scope[]
  grantedAt: string | null
  expiresAt: string | null
}

export interface ClientFormValues {
  name: string
  redirectUris: string
  scopes: Scope[]
  isPublic: boolean
  /** The field that was refused (`name`, `redirect_uris`, `scopes`): it takes the focus. */
  failed?: string
}

function createForm(csrf: string, values: ClientFormValues | undefined): Html {
  return html`<section class="card" aria-labelledby="create-h">
  <h2 id="create-h">Register an OAuth app</h2>
  <p class="lead">Apps call the v2 API with short-lived access tokens instead of a secret key. A server-side app uses the client credentials grant; an app that acts for other account holders sends them through <code>/oauth/authorize</code> (authorization code with PKCE).</p>
  <form class="stack" method="post" action="/dashboard/clients">
    ${csrfField(csrf)}
    <div class="field">
      <label for="client-name">Name</label>
      <input id="client-name" name="name" type="text" maxlength="100" required placeholder="e.g. Vet clinic integration" value="${values?.name ?? ''}" aria-describedby="client-name-hint"${fieldState('name', values?.failed)}>
      <p class="hint" id="client-name-hint">Shown to account holders on the consent page.</p>
    </div>
    <div class="field">
      <label for="redirect-uris">Redirect URIs</label>
      <textarea id="redirect-uris" name="redirect_uris" rows="3" placeholder="https://app.example.com/callback" aria-describedby="redirect-hint"${fieldState('redirect_uris', values?.failed)}>${values?.redirectUris ?? ''}</textarea>
      <p class="hint" id="redirect-hint">One per line; https, or http on localhost. Leave empty for client credentials only.</p>
    </div>
    <div class="field">
      <label><input type="checkbox" name="public" value="1" aria-describedby="public-hint"${values?.isPublic ? html` checked` : ''}> Public app (runs in a browser or on a phone)</label>
      <p class="hint" id="public-hint">A public app gets no secret, since its code is in its users' hands: it uses only the authorization code flow with PKCE, and its refresh tokens change on every use. It needs a redirect URI.</p>
    </div>
    ${scopeCheckboxes({ legend: 'Scopes the app may ask for', chosen: values?.scopes, failed: values?.failed })}
    <div class="actions"><button class="btn" type="submit">${icon('plus')}Create app</button></div>
  </form>
</section>`
}

function clientsTable(clients: ClientView[]): Html {
  return dataTable({
    caption: 'Your OAuth apps',
    testId: 'clients-table',
    rows: clients,
    empty: { icon: 'apps', text: 'No OAuth apps yet.' },
    rowAttributes: (c) => html` data-client-id="${c.client_id}"`,
    columns: [
      {
        label: 'App',
        cell: (c) =>
          html`<strong>${c.name}</strong><span class="sub mono">${c.client_id}</span>${c.client_type === 'public' ? html`<span class="sub">Public app (PKCE, no secret)</span>` : ''}`,
      },
      { label: 'Scopes', cell: (c) => scopeBadges(c.scopes) },
      {
        label: 'Redirect URIs',
        cell: (c) =>
          c.redirect_uris.length === 0
            ? html`<span class="sub">Client credentials only</span>`
            : c.redirect_uris.map((u) => html`<span class="sub mono url">${u}</span>`),
      },
      { label: 'Created', cell: (c) => when(c.created_at) },
      {
        label: 'Actions',
        hiddenLabel: true,
        numeric: true,
        cell: (c) =>
          html`<span class="actions">${c.client_type === 'public' ? '' : html`<a class="btn secondary small" href="/dashboard/clients/${c.client_id}/rotate" aria-label="Rotate the secret of ${c.name}">Rotate secret</a>`}<a class="btn secondary small" href="/dashboard/clients/${c.client_id}/delete" aria-label="Delete ${c.name}">Delete</a></span>`,
      },
    ],
  })
}

function grantsTable(csrf: string, grants: GrantView[]): Html {
  return dataTable({
    caption: 'Apps you authorised',
    testId: 'grants-table',
    rows: grants,
    empty: { icon: 'shield', text: 'You have not authorised any app to act for you.' },
    columns: [
      {
        label: 'App',
        cell: (g) => html`<strong>${g.clientName}</strong><span class="sub mono">${g.clientId}</span>`,
      },
      { label: 'Access', cell: (g) => scopeBadges(g.scopes) },
      { label: 'Authorised', cell: (g) => (g.grantedAt === null ? '—' : when(g.grantedAt)) },
      {
        label: 'Actions',
        hiddenLabel: true,
        numeric: true,
        cell: (
          g,
        ) => html`<form method="post" action="/dashboard/authorisations/${g.id}/revoke" data-confirm="Revoke ${g.clientName}'s access to your account?">
      ${csrfField(csrf)}<button class="btn secondary small" type="submit" aria-label="Revoke access of ${g.clientName}">Revoke access</button>
    </form>`,
      },
    ],
  })
}

export function clientsPage(input: {
  csrf: string
  email: string
  clients: ClientView[]
  grants: GrantView[]
  notice?: Notice | undefined
  values?: ClientFormValues
}): string {
  return appPage({
    title: 'OAuth apps',
    lead: 'Apps you built, and apps you allowed to use your account.',
    active: 'clients',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`${createForm(input.csrf, input.values)}
<section aria-labelledby="clients-h">
  <h2 id="clients-h">Your apps</h2>
  ${clientsTable(input.clients)}
</section>
<section aria-labelledby="grants-h" class="spaced">
  <h2 id="grants-h">Apps you authorised</h2>
  <p class="hint">Revoking one ends its access and refresh tokens at once; it has to ask you again.</p>
  ${grantsTable(input.csrf, input.grants)}
</section>`,
  })
}

export function clientSecretPage(input: {
  csrf: string
  email: string
  client: ClientView
  secret: string
  baseUrl: string
  rotated: boolean
}): string {
  const c = input.client
  const token = `curl -u ${c.client_id}:${input.secret} ${input.baseUrl}/oauth/token \\
  -d grant_type=client_credentials -d scope="${c.scopes.join(' ')}"`
  const authorize = `${input.baseUrl}/oauth/authorize?response_type=code&client_id=${c.client_id}&redirect_uri=${encodeURIComponent(c.redirect_uris[0] ?? 'REDIRECT_URI')}&scope=${encodeURIComponent(c.scopes.join(' '))}&code_challenge=CHALLENGE&code_challenge_method=S256&state=STATE`
  return appPage({
    title: input.rotated ? 'New client secret' : 'Your new OAuth app',
    crumbs: html`<a href="/dashboard/clients">OAuth apps</a>`,
    active: 'clients',
    email: input.email,
    csrf: input.csrf,
    notice: {
      kind: 'warning',
      text: html`<strong>Copy the client secret now.</strong> It is shown only this once: we keep just a hash of it.${input.rotated ? ' The previous secret no longer works.' : ''}`,
    },
    body: html`<section class="card" aria-labelledby="client-h">
  <h2 id="client-h">${c.name}</h2>
  <p class="lead">${scopeBadges(c.scopes)}</p>
  <label class="field" for="client-id"><span>Client ID</span></label>
  <div class="secret"><output id="client-id" data-testid="client-id">${c.client_id}</output><button type="button" class="btn-copy" data-copy="client-id" hidden>Copy</button></div>
  <label class="field" for="client-secret"><span>Client secret</span></label>
  <div class="secret"><output id="client-secret" data-testid="client-secret">${input.secret}</output><button type="button" class="btn-copy" data-copy="client-secret" hidden>Copy</button></div>
  <div class="actions"><a class="btn" href="/dashboard/clients">I have stored it safely</a></div>
</section>
<section class="card" aria-labelledby="use-h">
  <h2 id="use-h">Get a token</h2>
  <p class="lead">Client credentials (your own server), then call the v2 API with <code>Authorization: Bearer &lt;access_token&gt;</code>:</p>
  ${codeBlock('token-curl', token)}
  ${
    c.redirect_uris.length === 0
      ? ''
      : html`<p class="lead">For other account holders, send them to this address (authorization code with PKCE S256), then exchange the code at <code>/oauth/token</code>:</p>${codeBlock('authorize-url', authorize)}`
  }
</section>`,
  })
}

/** A new public app: its client id and how to use it from a browser (there is no secret). */
export function publicClientPage(input: {
  csrf: string
  email: string
  client: ClientView
  baseUrl: string
}): string {
  const c = input.client
  const redirectUri = c.redirect_uris[0] ?? 'REDIRECT_URI'
  const authorize = `${input.baseUrl}/oauth/authorize?response_type=code&client_id=${c.client_id}&redirect_uri=${encodeURIComponent(redirectUri)}&scope=${encodeURIComponent(c.scopes.join(' '))}&code_challenge=CHALLENGE&code_challenge_method=S256&state=STATE`
  const exchange = `fetch('${input.baseUrl}/oauth/token', {
  method: 'POST',
  body: new URLSearchParams({ grant_type: 'authorization_code', client_id: '${c.client_id}',
    code, redirect_uri: '${redirectUri}', code_verifier }),
})`
  return appPage({
    title: 'Your new OAuth app',
    crumbs: html`<a href="/dashboard/clients">OAuth apps</a>`,
    active: 'clients',
    email: input.email,
    csrf: input.csrf,
    notice: {
      kind: 'info',
      text: html`<strong>A public app has no secret.</strong> It proves each code exchange with PKCE instead. For a web page on another origin to call the service, its origin must be listed in the service's <code>CORS_ORIGINS</code>.`,
    },
    body: html`<section class="card" aria-labelledby="client-h">
  <h2 id="client-h">${c.name}</h2>
  <p class="lead">${scopeBadges(c.scopes)}</p>
  <label class="field" for="client-id"><span>Client ID</span></label>
  <div class="secret"><output id="client-id" data-testid="client-id">${c.client_id}</output><button type="button" class="btn-copy" data-copy="client-id" hidden>Copy</button></div>
  <div class="actions"><a class="btn" href="/dashboard/clients">Done</a></div>
</section>
<section class="card" aria-labelledby="use-h">
  <h2 id="use-h">Get a token</h2>
  <p class="lead">Send account holders to this address (authorization code with PKCE S256):</p>
  ${codeBlock('authorize-url', authorize)}
  <p class="lead">Then exchange the code, with the verifier behind the challenge, and call the v2 API with <code>Authorization: Bearer &lt;access_token&gt;</code>:</p>
  ${codeBlock('token-fetch', exchange)}
</section>`,
  })
}

export function confirmClientPage(input: {
  csrf: string
  email: string
  client: ClientView
  action: 'rotate' | 'delete'
}): string {
  const c = input.client
  const rotate = input.action === 'rotate'
  return appPage({
    title: rotate ? 'Rotate client secret' : 'Delete OAuth app',
    crumbs: html`<a href="/dashboard/clients">OAuth apps</a>`,
    active: 'clients',
    email: input.email,
    csrf: input.csrf,
    body: html`<section class="card">
  <h2>${rotate ? html`Rotate the secret of “${c.name}”?` : html`Delete “${c.name}”?`}</h2>
  <p>Client <span class="mono">${c.client_id}</span>, created ${when(c.created_at)}.</p>
  <div class="notice ${rotate ? 'warning' : 'error'}" role="note">${icon('alert')}<div><p>${
    rotate
      ? 'A new secret is made and shown once; the current one stops working at once. Tokens already issued keep working until they expire.'
      : 'The app can no longer get tokens, and every token it holds is refused from now on. Account holders who authorised it lose the connection. This cannot be undone.'
  }</p></div></div>
  <form method="post" action="/dashboard/clients/${c.client_id}/${input.action}" class="actions">
    ${csrfField(input.csrf)}
    <button class="btn ${rotate ? '' : 'danger'}" type="submit">${rotate ? 'Rotate secret' : 'Delete app'}</button>
    <a class="btn secondary" href="/dashboard/clients">Cancel</a>
  </form>
</section>`,
  })
}

export function oauthUnavailablePage(input: { csrf: string; email: string }): string {
  return appPage({
    title: 'OAuth apps',
    active: 'clients',
    email: input.email,
    csrf: input.csrf,
    body: html`<section class="card"><p>The OAuth authorisation server is not enabled on this service.</p></section>`,
  })
}
