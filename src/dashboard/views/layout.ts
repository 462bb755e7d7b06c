import { type Html, html, type Renderable, raw } from '../../web/html.ts'
import { type IconName, icon, LOGO } from '../../web/icons.ts'
import { csrfField, head, type Notice, noticeBlock } from '../../web/layout.ts'
import { MODE_BANNER_SLOT, MODE_SWITCH_SLOT } from '../mode-switch.ts'

export type NavKey =
  | 'overview'
  | 'keys'
  | 'clients'
  | 'pets'
  | 'users'
  | 'orders'
  | 'events'
  | 'webhooks'
  | 'logs'
  | 'sandbox'
  | 'account'

const NAV: { key: NavKey; href: string; label: string; icon: IconName }[] = [
  { key: 'overview', href: '/dashboard', label: 'Overview', icon: 'home' },
  { key: 'keys', href: '/dashboard/keys', label: 'API keys', icon: 'key' },
  { key: 'clients', href: '/dashboard/clients', label: 'OAuth apps', icon: 'apps' },
  { key: 'pets', href: '/dashboard/pets', label: 'Pets', icon: 'paw' },
  { key: 'users', href: '/dashboard/users', label: 'Users', icon: 'users' },
  { key: 'orders', href: '/dashboard/orders', label: 'Orders', icon: 'cart' },
  { key: 'events', href: '/dashboard/events', label: 'Events', icon: 'info' },
  { key: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks', icon: 'apps' },
  { key: 'logs', href: '/dashboard/logs', label: 'Logs', icon: 'info' },
  { key: 'sandbox', href: '/dashboard/sandbox', label: 'Sandbox', icon: 'info' },
  { key: 'account', href: '/dashboard/account', label: 'Account', icon: 'user' },
]

export interface AppPage {
  title: string
  /** Shown above the title (e.g. a link back to the list). */
  crumbs?: Html
  lead?: Renderable
  headActions?: Html
  active: NavKey
  email: string
  csrf: string
  notice?: Notice | undefined
  body: Html
}

/** A page of the signed-in dashboard: sidebar navigation, then the page. */
export function appPage(page: AppPage): string {
  return html`<!doctype html>
<html lang="en">
<head>${head(page.title)}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<div class="shell">
<aside class="sidebar"><div class="sidebar-inner">
  <a class="brand" href="/dashboard">${LOGO}<span>Pet Service<small>Dashboard</small></span></a>
  ${raw(MODE_SWITCH_SLOT)}
  <nav aria-label="Dashboard">
    <ul class="nav">
      ${NAV.map(
        (item) =>
          html`<li><a href="${item.href}"${item.key === page.active ? html` aria-current="page"` : ''}>${icon(item.icon)}${item.label}</a></li>`,
      )}
      <li><a href="/docs">${icon('book')}API reference</a></li>
    </ul>
  </nav>
  <div class="sidebar-foot">
    <span>Signed in as <span class="who">${page.email}</span></span>
    <form method="post" action="/dashboard/sign-out">${csrfField(page.csrf)}
      <button class="btn secondary small" type="submit">${icon('out')}Sign out</button>
    </form>
  </div>
</div></aside>
<main id="main" tabindex="-1">
  ${raw(MODE_BANNER_SLOT)}
  <header class="page-head">
    <div>
      ${page.crumbs === undefined ? '' : html`<div class="crumbs">${page.crumbs}</div>`}
      <h1>${page.title}</h1>
      ${page.lead === undefined ? '' : html`<p>${page.lead}</p>`}
    </div>
    ${page.headActions ?? ''}
  </header>
  ${noticeBlock(page.notice)}
  ${page.body}
</main>
</div>
</body>
</html>`.value
}

/**
 * A time, as the real time (UTC, to the second) and how long ago or how soon it is:
 * "2025-01-05 14:03:27 UTC (3 minutes ago)". The relative words alone said "just now" on every
 * row of a busy minute. In a table cell the relative part takes a line of its own.
 */
export function when(iso: string | null, empty = 'Never'): Html {
  const at = iso === null ? Number.NaN : Date.parse(iso)
  if (iso === null || Number.isNaN(at)) return html`<span class="sub-muted">${empty}</span>`
  // A no-break space keeps the zone with the time when the line wraps after the date.
  const real = `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')}\u00a0UTC`
  return html`<time datetime="${iso}">${real} <span class="ago">(${relative(at)})</span></time>`
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const UNITS: [string, number][] = [
  ['year', 365 * DAY],
  ['month', 30 * DAY],
  ['day', DAY],
  ['hour', HOUR],
  ['minute', MINUTE],
]

/** "3 minutes ago", "in 7 days", "just now": `at` (ms since the epoch) seen from `now`. */
export function relative(at: number, now = Date.now()): string {
  const future = at > now
  const abs = Math.abs(at - now)
  const [unit, size] = UNITS.find(([, size]) => abs >= size) ?? ['', 0]
  if (size === 0) return future ? 'in a moment' : 'just now'
  const n = Math.round(abs / size)
  const text = `${n} ${unit}${n === 1 ? '' : 's'}`
  return future ? `in ${text}` : `${text} ago`
}
