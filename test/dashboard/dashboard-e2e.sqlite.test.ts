import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import { chromiumPath, launchChromium, screenshot } from './browser.ts'

/**
 * The dashboard end to end, in real headless Chromium against a real listening server (SQLite
 * only: the browser adds nothing a second dialect would test; the security tests run on both).
 * The steps share one browser session and run in order, like a person would.
 */
const executablePath = chromiumPath()
// Without chromium on a developer machine the suite is skipped, loudly; CI installs it and must run it.
const suite = executablePath === undefined && process.env.CI !== 'true' ? describe.skip : describe

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
    await screenshot(page, 'sign-up')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview')
    expect(await page.getByTestId('base-url').textContent()).toBe(base)
  })

  it('creates an API key, shows it once, and the key creates a pet (201)', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Label').fill('Checkout service')
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
        body: JSON.stringify({ name: 'Grace Hopper', email: 'grace@example.com' }),
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
