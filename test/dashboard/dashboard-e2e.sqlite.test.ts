import { createHash, randomBytes } from 'node:crypto'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TYPICAL_SCOPES } from '../../src/dashboard/views/scopes.ts'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import {
  browserSuite,
  chromiumPath,
  launchChromium,
  screenshot,
  tickScopes,
  unlabelledControls,
} from '../helpers/browser.ts'

/**
 * The dashboard end to end, in real headless Chromium against a real listening server (SQLite
 * only: the browser adds nothing a second dialect would test; the security tests run on both).
 * The steps share one browser session and run in order, like a person would.
 */
const executablePath = chromiumPath()
const CALLBACK = 'http://127.0.0.1:9/callback'
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`dashboard in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let apiKey = ''
  const email = 'ada.lovelace@example.com'
  const password = 'lighthouse-harbour-37'

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const client = { id: '', secret: '' }
  const tokenRequest = (fields: Record<string, string>) =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(fields),
    })

  const api = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { authorization: basic(init.key ?? apiKey), ...init.headers },
    })

  it('signs up from the sign-in page and lands on the overview', async () => {
    await page.goto(`${base}/dashboard`)
    await expect.poll(() => page.url()).toContain('/dashboard/sign-in')
    await screenshot(page, 'sign-in')
    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(password)
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'sign-up')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview')
    expect(await page.getByTestId('base-url').textContent()).toBe(base)
  })

  it('creates an API key, shows it once, and the key creates a pet (201)', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    // Keyboard users meet the skip link first; every control has a label.
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content')
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByLabel('Label').fill('Checkout service')
    await tickScopes(page, [...TYPICAL_SCOPES, 'write:orders'])
    await page.getByRole('button', { name: 'Create key' }).click()
    apiKey = (await page.getByTestId('new-key').textContent()) ?? ''
    expect(apiKey).toMatch(/^pet_sk_[0-9A-Za-z]{36}$/)
    await screenshot(page, 'new-key')

    const created = await api('/v1/pet', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'Rex', species: 'dog', breed: 'collie' }),
    })
    expect(created.status).toBe(201)
  })

  it('lists the pets created through the API, with filters and counts', async () => {
    const owner = (await (
      await api('/v1/user', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Grace Hopper', email: 'grace@example.com', phone: '+1 555 0100' }),
      })
    ).json()) as { id: string }
    const more = [
      { name: 'Tom', species: 'cat', breed: 'tabby', status: 'pending', owner_id: owner.id },
      { name: 'Polly', species: 'parrot', status: 'sold', owner_id: owner.id },
      { name: 'Biscuit', species: 'dog', breed: 'beagle', owner_id: owner.id },
      { name: 'Nemo', species: 'fish', breed: 'clownfish' },
    ]
    for (const pet of more) {
      const res = await api('/v1/pet', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(pet),
      })
      expect(res.status).toBe(201)
    }

    await page.getByRole('link', { name: 'Pets' }).click()
    const table = page.getByTestId('pets-table')
    for (const name of ['Rex', 'Tom', 'Polly', 'Biscuit', 'Nemo']) {
      await expect.poll(() => table.getByRole('link', { name, exact: true }).count()).toBe(1)
    }
    await screenshot(page, 'pets')
    expect(await unlabelledControls(page)).toEqual([])

    await page.getByLabel('Status').selectOption('pending')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/status=pending/)
    expect(await table.locator('tbody tr').count()).toBe(1)
    expect(await table.textContent()).toContain('Tom')

    await table.getByRole('link', { name: 'Tom', exact: true }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tom')
    await screenshot(page, 'pet')

    await page.getByRole('link', { name: 'Users' }).click()
    expect(await page.getByTestId('users-table').textContent()).toContain('Grace Hopper')
    await screenshot(page, 'users')

    await page.getByRole('link', { name: 'Overview' }).click()
    expect(await page.getByTestId('count-total').textContent()).toBe('5')
    expect(await page.getByTestId('count-sold').textContent()).toBe('1')
    await screenshot(page, 'overview')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'overview-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  })

  it('browses the orders placed through the API, from the navigation, filtered by status', async () => {
    const { data: pets } = (await (await api('/v1/pet?limit=3')).json()) as { data: { id: number }[] }
    for (const [i, status] of (['placed', 'approved', 'delivered'] as const).entries()) {
      const res = await api('/v1/order', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          pet_id: pets[i]!.id,
          quantity: i + 1,
          status,
          ship_date: '2031-07-01T09:30:00Z',
        }),
      })
      expect(res.status).toBe(201)
    }

    await page.getByRole('link', { name: 'Orders', exact: true }).click()
    const table = page.getByTestId('orders-table')
    expect(await table.locator('tbody tr').count()).toBe(3)
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'orders')

    await page.getByLabel('Status').selectOption('approved')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/status=approved/)
    expect(await table.locator('tbody tr').count()).toBe(1)
    await table.locator('tbody tr a.mono').click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Order \d+$/)
    expect(JSON.parse((await page.getByTestId('order-json').textContent()) ?? '')).toMatchObject({
      quantity: 2,
      status: 'approved',
    })
    await screenshot(page, 'order')
  })

  it('revokes the key after confirmation, and the API refuses it (401)', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await screenshot(page, 'keys')
    await page.getByRole('link', { name: 'Revoke Checkout service' }).click()
    await screenshot(page, 'revoke-key')
    await page.getByRole('button', { name: 'Revoke key' }).click()
    await page.waitForURL(/notice=key_revoked/)
    const refused = await api('/v1/pet')
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as { code: string }).code).toBe('api_key_revoked')
  })

  it('creates an OAuth app whose client credentials obtain a token that the v2 API accepts', async () => {
    await page.getByRole('link', { name: 'OAuth apps' }).click()
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByLabel('Name').fill('Vet clinic portal')
    await page.getByLabel('Redirect URIs').fill(CALLBACK)
    await tickScopes(page, ['read:pets', 'write:pets'])
    await page.getByRole('button', { name: 'Create app' }).click()
    client.id = (await page.getByTestId('client-id').textContent()) ?? ''
    client.secret = (await page.getByTestId('client-secret').textContent()) ?? ''
    expect(client.id).toMatch(/^pet_ci_/)
    expect(client.secret).toMatch(/^pet_cs_/)
    await screenshot(page, 'new-client')

    const token = await tokenRequest({ grant_type: 'client_credentials', scope: 'read:pets write:pets' })
    expect(token.status).toBe(200)
    const { access_token } = (await token.json()) as { access_token: string }
    const added = await fetch(`${base}/v2/pet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Luna', photoUrls: [], status: 'available' }),
    })
    expect(added.status).toBe(200)
  })

  it('runs the authorization code + PKCE consent flow in the browser, then revokes it from the dashboard', async () => {
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    // The app's callback is not a real server: answer it in the browser and keep the URL.
    await page.route(`${CALLBACK}**`, (route) =>
      route.fulfill({ contentType: 'text/plain', body: 'callback' }),
    )
    const authorize = new URL(`${base}/oauth/authorize`)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: CALLBACK,
      scope: 'read:pets write:pets',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz-state',
    }))
      authorize.searchParams.set(k, v)
    await page.goto(authorize.toString())
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(password)
    await screenshot(page, 'oauth-sign-in')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('button', { name: 'Allow' }).count()).toBe(1)
    expect(await page.textContent('body')).toContain('Vet clinic portal')
    await screenshot(page, 'oauth-consent')
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL(`${CALLBACK}**`)
    const back = new URL(page.url())
    expect(back.searchParams.get('state')).toBe('xyz-state')
    const code = back.searchParams.get('code') ?? ''
    expect(code).not.toBe('')

    const exchanged = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
    })
    expect(exchanged.status).toBe(200)
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string; scope: string }
    expect(tokens.scope.split(' ').sort()).toEqual(['read:pets', 'write:pets'])
    const listed = await fetch(`${base}/v2/pet/findByStatus?status=available`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(listed.status).toBe(200)

    await page.goto(`${base}/dashboard/clients`)
    const grants = page.getByTestId('grants-table')
    expect(await grants.textContent()).toContain('Vet clinic portal')
    await screenshot(page, 'clients')
    page.once('dialog', (dialog) => dialog.accept())
    await grants.getByRole('button', { name: 'Revoke access of Vet clinic portal' }).click()
    await page.waitForURL(/notice=grant_revoked/)
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    expect(refreshed.status).toBe(400)
    await expect
      .poll(
        async () =>
          (
            await fetch(`${base}/v2/pet/findByStatus?status=available`, {
              headers: { authorization: `Bearer ${tokens.access_token}` },
            })
          ).status,
      )
      .toBe(401)
  })

  it('signs out, after which the old session cookie is refused', async () => {
    const session = (await context.cookies()).find((c) => c.name === 'pet_session')
    expect(session?.httpOnly).toBe(true)
    expect(session?.sameSite).toBe('Lax')
    await page.getByRole('link', { name: 'Account' }).click()
    await screenshot(page, 'account')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/dashboard\/sign-in\?notice=signed_out/)

    await page.goto(`${base}/dashboard/keys`)
    expect(page.url()).toContain('/dashboard/sign-in')
    const replay = await fetch(`${base}/dashboard/keys`, {
      headers: { cookie: `pet_session=${session?.value}` },
      redirect: 'manual',
    })
    expect(replay.status).toBe(303)
    expect(replay.headers.get('location')).toContain('/dashboard/sign-in')
  })
})
