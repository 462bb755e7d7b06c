import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ASSETS_DIR } from './assets-dir.ts'
import { type Html, html, type Renderable } from './html.ts'
import { type IconName, icon, LOGO } from './icons.ts'

/**
 * The page frame shared by the dashboard and the OAuth sign-in and consent pages: the document
 * head (stylesheet and script by fingerprinted URL), notices, the CSRF field and the centred
 * card of the sign-in pages. The dashboard's own frame (sidebar, navigation) is in
 * src/dashboard/views/layout.ts.
 */

/** Where the stylesheet, script and icon are served (src/dashboard/dashboard-plugin.ts). */
export const ASSETS = '/dashboard/assets'

// A fingerprint of the stylesheet and script in their URLs: browsers may cache them for an hour,
// and a new release still reaches them at once.
const ASSET_VERSION = createHash('sha256')
  .update(readFileSync(new URL('dashboard.css', ASSETS_DIR)))
  .update(readFileSync(new URL('dashboard.js', ASSETS_DIR)))
  .digest('hex')
  .slice(0, 10)

export interface Notice {
  kind: 'success' | 'error' | 'warning' | 'info'
  text: Renderable
}

export function head(title: string): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · Pet Service</title>
<link rel="icon" href="${ASSETS}/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS}/dashboard.css?v=${ASSET_VERSION}">
<script src="${ASSETS}/dashboard.js?v=${ASSET_VERSION}" defer></script>`
}

export function noticeBlock(notice: Notice | undefined): Html {
  if (notice === undefined) return html``
  const which: IconName = notice.kind === 'success' ? 'check' : notice.kind === 'info' ? 'info' : 'alert'
  const role = notice.kind === 'error' ? 'alert' : 'status'
  return html`<div class="notice ${notice.kind}" role="${role}">${icon(which)}<div><p>${notice.text}</p></div></div>`
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`
}

export interface AuthPage {
  title: string
  lead?: Renderable
  notice?: Notice | undefined
  body: Html
  foot?: Html
}

/**
 * A single centred card: the dashboard's sign-in, sign-up and error pages, and the OAuth
 * sign-in and consent pages (src/routes/oauth/), so both wear one look.
 */
export function authPage(page: AuthPage): string {
  return html`<!doctype html>
<html lang="en">
<head>${head(page.title)}</head>
<body class="auth">
<main id="main" class="auth-box">
  <a class="brand" href="/dashboard">${LOGO}<span>Pet Service</span></a>
  <div class="card">
    <h1>${page.title}</h1>
    ${page.lead === undefined ? '' : html`<p class="lead">${page.lead}</p>`}
    ${noticeBlock(page.notice)}
    ${page.body}
  </div>
  ${page.foot === undefined ? '' : html`<p class="auth-foot">${page.foot}</p>`}
</main>
</body>
</html>`.value
}
