import { MIN_PASSWORD_LENGTH } from '../../accounts/password-strength.ts'
import { fieldState } from '../../web/field-state.ts'
import { type Html, html } from '../../web/html.ts'
import { authPage, csrfField, type Notice } from '../../web/layout.ts'
import { appPage, when } from './layout.ts'

function passwordInput(
  id: string,
  name: string,
  autocomplete: string,
  meter: boolean,
  failed: string | undefined,
): Html {
  const describedBy = meter ? `${id}-hint ${id}-meter-text` : `${id}-hint`
  return html`<input id="${id}" name="${name}" type="password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200"
    autocomplete="${autocomplete}" aria-describedby="${describedBy}"${meter ? html` data-strength="${id}-meter"` : ''}${fieldState(name, failed)}>
  ${
    meter
      ? html`<div class="meter" id="${id}-meter" hidden><span></span></div>
  <p class="hint" id="${id}-meter-text" aria-live="polite"></p>`
      : ''
  }`
}

export function signInPage(input: {
  csrf: string
  email?: string
  next?: string
  notice?: Notice
  /** The field a refused sign-in puts the focus on. */
  field?: string
}): string {
  return authPage({
    title: 'Sign in to your account',
    lead: 'Manage your API keys, OAuth apps and pet records.',
    notice: input.notice,
    body: html`<form class="stack" method="post" action="/dashboard/sign-in" novalidate>
  ${csrfField(input.csrf)}
  ${input.next === undefined ? '' : html`<input type="hidden" name="next" value="${input.next}">`}
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" required autocomplete="username" value="${input.email ?? ''}"${fieldState('email', input.field, true)}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" required autocomplete="current-password"${fieldState('password', input.field)}>
  </div>
  <button class="btn block" type="submit">Sign in</button>
</form>`,
    foot: html`New here? <a href="/dashboard/sign-up${input.next === undefined ? '' : `?next=${encodeURIComponent(input.next)}`}">Create an account</a>`,
  })
}

export function signUpPage(input: {
  csrf: string
  email?: string
  next?: string
  notice?: Notice
  field?: string
}): string {
  return authPage({
    title: 'Create your account',
    lead: 'Free to start. Your API keys are one click away.',
    notice: input.notice,
    body: html`<form class="stack" method="post" action="/dashboard/sign-up" novalidate>
  ${csrfField(input.csrf)}
  ${input.next === undefined ? '' : html`<input type="hidden" name="next" value="${input.next}">`}
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" required autocomplete="username" value="${input.email ?? ''}"${fieldState('email', input.field, true)}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    ${passwordInput('password', 'password', 'new-password', true, input.field)}
    <p class="hint" id="password-hint">At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make a strong, memorable password.</p>
  </div>
  <button class="btn block" type="submit">Create account</button>
</form>`,
    foot: html`Already have an account? <a href="/dashboard/sign-in">Sign in</a>`,
  })
}

export function accountPage(input: {
  csrf: string
  email: string
  createdAt: string
  notice?: Notice | undefined
  field?: string
}): string {
  return appPage({
    title: 'Account',
    lead: 'Your sign-in details.',
    active: 'account',
    email: input.email,
    csrf: input.csrf,
    notice: input.notice,
    body: html`<div class="two-col">
<section class="card" aria-labelledby="profile-h">
  <h2 id="profile-h">Profile</h2>
  <dl class="props">
    <dt>Email</dt><dd>${input.email}</dd>
    <dt>Member since</dt><dd>${when(input.createdAt)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="password-h">
  <h2 id="password-h">Change password</h2>
  <p class="lead">Changing it signs out every other session of this account.</p>
  <form class="stack" method="post" action="/dashboard/account/password" novalidate>
    ${csrfField(input.csrf)}
    <input type="text" name="username" autocomplete="username" value="${input.email}" hidden>
    <div class="field">
      <label for="current_password">Current password</label>
      <input id="current_password" name="current_password" type="password" required autocomplete="current-password"${fieldState('current_password', input.field)}>
    </div>
    <div class="field">
      <label for="new_password">New password</label>
      ${passwordInput('new_password', 'new_password', 'new-password', true, input.field)}
      <p class="hint" id="new_password-hint">At least ${MIN_PASSWORD_LENGTH} characters.</p>
    </div>
    <div class="actions"><button class="btn" type="submit">Change password</button></div>
  </form>
</section>
</div>`,
  })
}

export function messagePage(input: {
  title: string
  text: string
  link?: { href: string; label: string }
}): string {
  return authPage({
    title: input.title,
    body: html`<p>${input.text}</p>${
      input.link === undefined
        ? ''
        : html`<p><a class="btn block" href="${input.link.href}">${input.link.label}</a></p>`
    }`,
  })
}
