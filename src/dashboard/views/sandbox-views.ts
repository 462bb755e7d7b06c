import { html } from '../../web/html.ts'
import { icon } from '../../web/icons.ts'
import { csrfField, type Notice } from '../../web/layout.ts'
import { appPage, when } from './layout.ts'

export interface SandboxPageInput {
  csrf: string
  email: string
  notice?: Notice | undefined
  /** The sandbox, once created. */
  sandbox: { id: string; created_at: string } | undefined
  mode: 'live' | 'sandbox'
}

/** What a sandbox is, and its actions: create it, switch to it, reset it. */
export function sandboxPage(input: SandboxPageInput): string {
  const about = html`<p>A sandbox is a separate account that belongs to yours: its own pets, users, orders, API keys (<span class="mono">pet_sk_test_…</span>), OAuth apps, webhooks and events. Nothing in it reaches your live account, and nothing of your live account reaches it: try an integration, run a partner's CI or experiment without touching real data.</p>`
  const body =
    input.sandbox === undefined
      ? html`<section class="card">
  <h2>Create your sandbox</h2>
  ${about}
  <form method="post" action="/dashboard/sandbox" class="actions">
    ${csrfField(input.csrf)}
    <button class="btn" type="submit">Create sandbox</button>
  </form>
</section>`
      : html`<section class="card">
  <h2>Your sandbox</h2>
  ${about}
  <p>Sandbox <span class="mono">${input.sandbox.id}</span>, created ${when(input.sandbox.created_at)}. You are in the <strong>${input.mode === 'sandbox' ? 'sandbox' : 'live account'}</strong> now; the switch at the top of every page changes that.</p>
  ${
    input.mode === 'sandbox'
      ? ''
      : html`<form method="post" action="/dashboard/sandbox/switch" class="actions">${csrfField(input.csrf)}<button class="btn" type="submit" name="mode" value="sandbox">Switch to the sandbox</button></form>`
  }
</section>
<section class="card">
  <h2>Reset the sandbox</h2>
  <p>Deletes all of the sandbox's data — pets and their images, users, orders, events and webhook deliveries — and keeps its API keys, OAuth apps and webhook endpoints, so your integration's settings keep working. Your live account is not touched.</p>
  <a class="btn danger" href="/dashboard/sandbox/reset">Reset sandbox…</a>
</section>`
  return appPage({
    title: 'Sandbox',
    lead: 'Test data, kept apart from your live account.',
    active: 'sandbox',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body,
  })
}

export function resetSandboxPage(input: { csrf: string; email: string; sandboxId: string }): string {
  return appPage({
    title: 'Reset sandbox',
    crumbs: html`<a href="/dashboard/sandbox">Sandbox</a>`,
    active: 'sandbox',
    email: input.email,
    csrf: input.csrf,
    body: html`<section class="card">
  <h2>Reset sandbox <span class="mono">${input.sandboxId}</span>?</h2>
  <div class="notice error" role="note">${icon('alert')}<div><p>Every pet, image, user, order, event and webhook delivery of the sandbox is deleted when you confirm. This cannot be undone. Its API keys, OAuth apps and webhook endpoints stay; your live account is not touched.</p></div></div>
  <form method="post" action="/dashboard/sandbox/reset" class="actions">
    ${csrfField(input.csrf)}
    <button class="btn danger" type="submit">Delete the sandbox's data</button>
    <a class="btn secondary" href="/dashboard/sandbox">Cancel</a>
  </form>
</section>`,
  })
}
