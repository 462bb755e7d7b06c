import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { setAccountPassword } from '../../src/accounts/accounts-repository.ts'
import { hashPassword } from '../../src/accounts/passwords.ts'
import { createPublicClient } from '../../src/oauth/clients-service.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium } from '../helpers/browser.ts'

/**
 * A browser app on another origin, in real headless Chromium: a page served from its own port
 * runs the authorization code flow with PKCE for a public client, exchanges the code at
 * /oauth/token with fetch, and calls the v2 API, reading the headers CORS exposes. A page of an
 * origin not in CORS_ORIGINS is kept from reading any answer by the browser. SQLite only: the
 * browser adds nothing a second dialect would test.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI
const PASSWORD = 'lighthouse-harbour-37'

/** A site of one origin: each path answers what is given for it (HTML, or JSON for `.json`). */
async function site(
  pages: (origin: string) => Record<string, string | (() => string)>,
): Promise<{ origin: string; server: Server }> {
  let routes: Record<string, string | (() => string)> = {}
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const body = routes[path]
    const type = path.endsWith('.json') ? 'application/json' : 'text/html; charset=utf-8'
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': type })
    res.end(body === undefined ? 'not found' : typeof body === 'string' ? body : body())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  routes = pages(origin)
  return { origin, server }
}

const page = (script: string) =>
  `<!doctype html><meta charset="utf-8"><title>app</title><script type="module">${script}</script>`

/** Whether a fetch from the page could read the answer: its status, or the error's name. */
const PROBE = `
window.probe = async (url, init) => {
  try { const res = await fetch(url, init); return 'read ' + res.status } catch (e) { return 'blocked ' + e.name }
}`

suite(`CORS and a public OAuth client in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let api: string
  let browser: Browser
  let tab: Page
  let app: { origin: string; server: Server }
  let other: { origin: string; server: Server }
  let email: string
  let clientId = ''

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    // The app's pages need the API's address and the client id, known only once both are up.
    const config = { api: '', clientId: '' }
    app = await site((origin) => ({
      '/': page(`
        const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
        const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)))
        sessionStorage.setItem('verifier', verifier)
        const challenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
        const config = await (await fetch('/config.json')).json()
        location.href = config.api + '/oauth/authorize?' + new URLSearchParams({
          response_type: 'code', client_id: config.clientId, redirect_uri: '${origin}/callback',
          scope: 'read:pets write:pets', state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256',
        })`),
      '/callback': page(`${PROBE}
        const config = await (await fetch('/config.json')).json()
        const params = new URLSearchParams(location.search)
        const out = { state: params.get('state') }
        try {
          const exchanged = await fetch(config.api + '/oauth/token', {
            method: 'POST',
            body: new URLSearchParams({
              grant_type: 'authorization_code', client_id: config.clientId, code: params.get('code'),
              redirect_uri: '${origin}/callback', code_verifier: sessionStorage.getItem('verifier'),
            }),
          })
          const tokens = await exchanged.json()
          out.token = { status: exchanged.status, scope: tokens.scope, refresh: typeof tokens.refresh_token }
          const auth = { authorization: 'Bearer ' + tokens.access_token }
          const json = { ...auth, 'content-type': 'application/json' }
          const created = await fetch(config.api + '/v2/pet', {
            method: 'POST', headers: json, body: JSON.stringify({ name: 'Rex', photoUrls: [] }),
          })
          const pet = await created.json()
          out.created = { status: created.status, etag: created.headers.get('etag') }
          const put = await fetch(config.api + '/v2/pet', {
            method: 'PUT', headers: { ...json, 'if-match': created.headers.get('etag') },
            body: JSON.stringify({ ...pet, status: 'pending' }),
          })
          out.put = { status: put.status, etag: put.headers.get('etag') }
          const got = await fetch(config.api + '/v2/pet/' + pet.id, { headers: auth })
          out.get = {
            status: got.status, etag: got.headers.get('etag'), requestId: got.headers.get('request-id'),
            rateLimit: got.headers.get('ratelimit'), body: await got.json(),
          }
          const stale = await fetch(config.api + '/v2/pet', {
            method: 'PUT', headers: { ...json, 'if-match': created.headers.get('etag') },
            body: JSON.stringify({ ...pet, status: 'sold' }),
          })
          out.stale = { status: stale.status, requestId: stale.headers.get('request-id') }
          out.dashboard = await window.probe(config.api + '/dashboard/sign-in')
        } catch (error) {
          out.error = String(error)
        }
        window.result = out`),
      '/config.json': () => JSON.stringify(config),
    }))
    other = await site(() => ({ '/': page(PROBE) }))
    t = await createTestApp({ CORS_ORIGINS: app.origin, RATE_LIMIT_RPS: '100' })
    api = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const owner = await t.newAccount()
    email = owner.email
    await setAccountPassword(
      t.database.db,
      owner.accountId,
      await hashPassword(PASSWORD, { account: owner.accountId }),
    )
    clientId = (
      await createPublicClient(t.database.db, {
        accountId: owner.accountId,
        name: 'Browser pet app',
        scopes: ['read:pets', 'write:pets'],
        redirectUris: [`${app.origin}/callback`],
      })
    ).info.client_id
    config.api = api
    config.clientId = clientId
    browser = await launchChromium(executablePath)
    tab = await (await browser.newContext()).newPage()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await t?.close()
    app?.server.close()
    other?.server.close()
  })

  it('runs the code flow with PKCE from a page on another origin, then calls the v2 API with the token', async () => {
    await tab.goto(`${app.origin}/`)
    await tab.waitForURL(`${api}/oauth/interaction/**`)
    await tab.getByLabel('Email').fill(email)
    await tab.getByLabel('Password').fill(PASSWORD)
    await tab.getByRole('button', { name: 'Sign in' }).click()
    await tab.getByRole('button', { name: 'Allow' }).click()
    await tab.waitForURL(`${app.origin}/callback**`)
    await tab.waitForFunction('window.result !== undefined', undefined, { timeout: 30_000 })
    const result = (await tab.evaluate('window.result')) as Record<string, Record<string, unknown> | string>
    expect(result.error).toBeUndefined()
    expect(result.state).toBe('st-1')
    expect(result.token).toEqual({ status: 200, scope: 'read:pets write:pets', refresh: 'string' })
    expect(result.created).toEqual({ status: 200, etag: '"1"' })
    expect(result.put).toEqual({ status: 200, etag: '"2"' })
    expect(result.get).toMatchObject({ status: 200, etag: '"2"', body: { name: 'Rex', status: 'pending' } })
    const got = result.get as { requestId: string; rateLimit: string }
    expect(got.requestId).toMatch(/^req_/)
    expect(got.rateLimit).toMatch(/;r=\d+/)
    // A stale If-Match: the page reads the refusal and its request id.
    expect(result.stale).toMatchObject({ status: 412, requestId: expect.stringMatching(/^req_/) })
    // The dashboard stays same-origin even for an allowed origin.
    expect(result.dashboard).toBe('blocked TypeError')
  }, 120_000)

  it('keeps a page of an origin not in CORS_ORIGINS from reading any answer', async () => {
    await tab.goto(`${other.origin}/`)
    await tab.waitForFunction('typeof window.probe === "function"')
    const probe = (url: string, init: Record<string, unknown> = {}) =>
      tab.evaluate(`window.probe(${JSON.stringify(url)}, ${JSON.stringify(init)})`)
    expect(await probe(`${api}/v1/pet`)).toBe('blocked TypeError')
    expect(await probe(`${api}/v2/pet/1`, { headers: { authorization: 'Bearer x' } })).toBe(
      'blocked TypeError',
    )
    expect(
      await probe(`${api}/oauth/token`, {
        method: 'POST',
        body: `grant_type=refresh_token&client_id=${clientId}&refresh_token=x`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    ).toBe('blocked TypeError')
    // The same calls from the allowed origin are read (here: the API's 401 and the provider's 400).
    await tab.goto(`${app.origin}/callback`)
    await tab.waitForFunction('window.result !== undefined')
    const allowed = (url: string, init: Record<string, unknown> = {}) =>
      tab.evaluate(`window.probe(${JSON.stringify(url)}, ${JSON.stringify(init)})`)
    expect(await allowed(`${api}/v1/pet`)).toBe('read 401')
    expect(await allowed(`${api}/v2/pet/1`, { headers: { authorization: 'Bearer x' } })).toBe('read 401')
  }, 60_000)
})
