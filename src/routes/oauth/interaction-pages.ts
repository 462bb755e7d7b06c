import { SCOPES, type Scope } from '../../access/scopes.ts'
import { fieldState } from '../../web/field-state.ts'
import { html } from '../../web/html.ts'
import { icon } from '../../web/icons.ts'
import { authPage } from '../../web/layout.ts'

/**
 * The HTML of the sign-in and consent pages of `/oauth/authorize`, in the dashboard's look (the
 * web kit's card layout and its stylesheet under /dashboard/assets; no inline styles or scripts).
 * Every value is escaped by the kit's `html` template.
 */

export interface SignInPageInput {
  action: string
  clientName: string
  email?: string
  error?: string
}

export function renderSignInPage(input: SignInPageInput): string {
  // A refused sign-in keeps the email: the password is what to type again.
  const failed = input.error === undefined ? undefined : 'password'
  return authPage({
    title: 'Sign in to continue',
    lead: html`<strong>${input.clientName}</strong> wants to use your Pet Service account. Sign in first.`,
    notice: input.error === undefined ? undefined : { kind: 'error', text: input.error },
    body: html`<form class="stack" method="post" action="${input.action}">
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}"${fieldState('email', failed, true)}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${fieldState('password', failed)}>
  </div>
  <button class="btn block" type="submit">Sign in</button>
</form>`,
    foot: html`No account yet? <a href="/dashboard/sign-up">Create one</a>, then come back to the app.`,
  })
}

export interface ConsentPageInput {
  action: string
  abortAction: string
  clientName: string
  email: string
  scopes: Scope[]
  /** The app belongs to a sandbox: what it is allowed reaches the account's sandbox only. */
  sandbox: boolean
}

export function renderConsentPage(input: ConsentPageInput): string {
  const items =
    input.scopes.length === 0
      ? html`<li>${icon('check')}<span>Confirm who you are (no access to your records)</span></li>`
      : input.scopes.map(
          (s) => html`<li>${icon('check')}<span>${SCOPES[s]} <span class="sub mono">${s}</span></span></li>`,
        )
  return authPage({
    title: `Allow ${input.clientName} to access your account?`,
    lead: html`Signed in as <strong>${input.email}</strong>. ${input.clientName} asks to:`,
    body: html`${
      input.sandbox
        ? html`<p class="sandbox-banner" data-testid="sandbox-consent"><strong>Sandbox app:</strong> it reaches your sandbox's test data only, never your live account's.</p>`
        : ''
    }<ul class="scope-list">${items}</ul>
<p class="hint">You can revoke this at any time under <a href="/dashboard/clients">OAuth apps</a> in your dashboard.</p>
<div class="actions">
  <form method="post" action="${input.action}">
    <button class="btn" type="submit" name="decision" value="allow">Allow</button>
  </form>
  <form method="post" action="${input.abortAction}">
    <button class="btn secondary" type="submit" name="decision" value="deny">Deny</button>
  </form>
</div>`,
  })
}

export function renderErrorPage(error: string, description?: string): string {
  return authPage({
    title: 'This authorisation request cannot continue',
    notice: {
      kind: 'error',
      text: html`<code>${error}</code>${description === undefined ? '' : `: ${description}`}`,
    },
    body: html`<p>Go back to the application and start again.</p>`,
  })
}
