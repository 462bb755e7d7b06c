import { type Html, html, type Renderable } from '../../web/html.ts'
import { type IconName, icon, LOGO } from '../../web/icons.ts'
import { csrfField, head, type Notice, noticeBlock } from '../../web/layout.ts'

export type NavKey = 'overview' | 'keys' | 'clients' | 'pets' | 'users' | 'events' | 'webhooks' | 'account'

const NAV: { key: NavKey; href: string; label: string; icon: IconName }[] = [
  { key: 'overview', href: '/dashboard', label: 'Overview', icon: 'home' },
  { key: 'keys', href: '/dashboard/keys', label: 'API keys', icon: 'key' },
  { key: 'clients', href: '/dashboard/clients', label: 'OAuth apps', icon: 'apps' },
  { key: 'pets', href: '/dashboard/pets', label: 'Pets', icon: 'paw' },
  { key: 'users', href: '/dashboard/users', label: 'Users', icon: 'users' },
  { key: 'events', href: '/dashboard/events', label: 'Events', icon: 'info' },
  { key: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks', icon: 'apps' },
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

/** "3 minutes ago"-style text for recent times, a date otherwise; the full time in a tooltip. */
export function when(iso: string | null, empty = 'Never'): Html {
  if (iso === null) return html`<span class="sub-muted">${empty}</span>`
  return html`<time datetime="${iso}" title="${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}">${relative(iso)}</time>`
}

export function relative(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now
  const future = ms > 0
  const abs = Math.abs(ms)
  const minute = 60_000
  const hour = 60 * minute
  const day = 24 * hour
  const phrase = (n: number, unit: string) => {
    const text = `${n} ${unit}${n === 1 ? '' : 's'}`
    return future ? `in ${text}` : `${text} ago`
  }
  if (abs < minute) return future ? 'in a moment' : 'just now'
  if (abs < hour) return phrase(Math.round(abs / minute), 'minute')
  if (abs < day) return phrase(Math.round(abs / hour), 'hour')
  if (abs < 30 * day) return phrase(Math.round(abs / day), 'day')
  return new Date(iso).toLocaleDateString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  })
}
