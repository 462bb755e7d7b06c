import { html } from '../web/html.ts'
import { csrfField } from '../web/layout.ts'
import type { DashboardSession } from './sessions.ts'

/**
 * The live/sandbox switch every signed-in page carries in its header. The pages are built by
 * views that know nothing of the session's mode, so the page frame (views/layout.ts) leaves two
 * slots that the dashboard's onSend hook fills from the session: the switch, and in a sandbox a
 * banner across the page, so that no one mistakes test data for live data.
 */
export const MODE_SWITCH_SLOT = '<!--mode-switch-->'
export const MODE_BANNER_SLOT = '<!--mode-banner-->'

export function modeSwitch(session: DashboardSession, csrf: string): string {
  const option = (mode: 'live' | 'sandbox', label: string) =>
    session.mode === mode
      ? html`<span class="mode-option current ${mode}" aria-current="true">${label}</span>`
      : html`<button class="mode-option ${mode}" type="submit" name="mode" value="${mode}">${label}</button>`
  return html`<form class="mode-switch" method="post" action="/dashboard/sandbox/switch" aria-label="Live or sandbox">
    ${csrfField(csrf)}
    ${option('live', 'Live')}${option('sandbox', 'Sandbox')}
  </form>`.value
}

export function modeBanner(session: DashboardSession): string {
  if (session.mode !== 'sandbox') return ''
  return html`<div class="sandbox-banner" role="status">You are in the <strong>sandbox</strong>: test data, with <span class="mono">pet_sk_test_</span> keys. Nothing here reaches your live account. <a href="/dashboard/sandbox">Sandbox settings</a></div>`
    .value
}

/** The page with its slots filled for this session (emptied when there is none). */
export function fillModeSlots(page: string, session: DashboardSession | null, csrf: () => string): string {
  if (!page.includes(MODE_SWITCH_SLOT)) return page
  return page
    .replace(MODE_SWITCH_SLOT, session === null ? '' : modeSwitch(session, csrf()))
    .replace(MODE_BANNER_SLOT, session === null ? '' : modeBanner(session))
}
