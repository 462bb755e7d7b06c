import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium, tickScopes } from '../helpers/browser.ts'
import { pkcePair } from '../helpers/oauth.ts'

/**
 * The dashboard's forms in headless Chromium: the scope boxes of a new key or app start unticked
 * and name what a typical integration needs, and after a refused submission the focus is on the
 * field that failed, so a person (or a screen reader) lands where the fix goes. SQLite only,
 * like the other browser tests.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI
const EMAIL = 'forms@example.com'
const PASSWORD = 'lighthouse-harbour-37'
const CALLBACK = 'https://portal.example.com/oauth/callback'

suite(`dashboard forms in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  /** The focused control, as "name" (or "name=value" for a checkbox). */
  const focused = () =>
    page.evaluate(
      `(() => { const el = document.activeElement; return el.type === 'checkbox' ? el.name + '=' + el.value : el.name || el.tagName })()`,
    ) as Promise<string>

  const submit = async (button: string) => {
    await page.getByRole('button', { name: button }).click()
    await page.getByRole('alert').waitFor()
  }

  it('focuses the field that failed on the sign-up form', async () => {
    await page.goto(`${base}/dashboard/sign-up`)
    expect(await focused()).toBe('email')
    await page.getByLabel('Email').fill('not-an-email')
    await page.getByLabel('Password').fill(PASSWORD)
    await submit('Create account')
    expect(await focused()).toBe('email')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill('Password1!')
    await submit('Create account')
    expect(await page.getByRole('alert').textContent()).toMatch(/password/i)
    expect(await focused()).toBe('password')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/notice=welcome/)
  })

  it('leaves every scope of a new key and a new app unticked, and names the ones a typical integration needs', async () => {
    for (const path of ['/dashboard/keys', '/dashboard/clients']) {
      await page.goto(`${base}${path}`)
      const scopes = page.locator('input[name="scopes"]')
      expect(await scopes.count(), path).toBeGreaterThan(4)
      for (const box of await scopes.all()) expect(await box.isChecked(), path).toBe(false)
      const fieldset = page.locator('fieldset', { has: scopes.first() })
      expect(await fieldset.textContent(), path).toContain(
        'A typical integration, one that keeps pets and their owners, needs read:pets, write:pets, read:users and write:users.',
      )
    }
  })

  it('focuses the scopes of the key form when none is ticked', async () => {
    await page.goto(`${base}/dashboard/keys`)
    await page.getByLabel('Label').fill('No scope')
    await submit('Create key')
    expect(await focused()).toBe('scopes=read:pets')
    await tickScopes(page)
    await page.getByRole('button', { name: 'Create key' }).click()
    expect(await page.getByTestId('new-key').textContent()).toMatch(/^pet_sk_/)
  })

  it('focuses the field that failed on the OAuth app form', async () => {
    await page.goto(`${base}/dashboard/clients`)
    await page.getByLabel('read:pets').check()
    // Blank to the server, which trims it (the browser checks only that it is there).
    await page.getByLabel('Name').fill('   ')
    await submit('Create app')
    expect(await focused()).toBe('name')
    await page.getByLabel('Name').fill('Vet clinic portal')
    await page.getByLabel('Redirect URIs').fill('ftp://portal.example.com/callback')
    await submit('Create app')
    expect(await focused()).toBe('redirect_uris')
    await page.getByLabel('Redirect URIs').fill(CALLBACK)
    await page.getByLabel('read:pets').uncheck()
    await submit('Create app')
    expect(await focused()).toBe('scopes=read:pets')
    await page.getByLabel('read:pets').check()
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByTestId('client-id').waitFor()
  })

  it('focuses the field that failed on the add-endpoint form', async () => {
    await page.goto(`${base}/dashboard/webhooks`)
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hooks')
    await submit('Add endpoint')
    expect(await focused()).toBe('url')
    await page.getByLabel('Endpoint URL').fill('https://example.com/hooks')
    await page.getByLabel('* (every event)').uncheck()
    await submit('Add endpoint')
    expect(await focused()).toBe('enabled_events=*')
  })

  it('focuses the field that failed on the change-password form', async () => {
    await page.goto(`${base}/dashboard/account`)
    await page.getByLabel('Current password').fill('not-my-password-at-all')
    await page.getByLabel('New password').fill('another-lighthouse-harbour-38')
    await submit('Change password')
    expect(await focused()).toBe('current_password')
    await page.getByLabel('Current password').fill(PASSWORD)
    await page.getByLabel('New password').fill('Summer2024!')
    await submit('Change password')
    expect(await focused()).toBe('new_password')
  })

  it('focuses the password after a wrong one on the sign-in pages (dashboard and OAuth)', async () => {
    await page.goto(`${base}/dashboard/clients`)
    const clientId = await page.locator('[data-client-id]').first().getAttribute('data-client-id')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/notice=signed_out/)
    expect(await focused()).toBe('email')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill('not-my-password-at-all')
    await submit('Sign in')
    expect(await focused()).toBe('password')

    const { challenge } = pkcePair()
    const authorize = new URL(`${base}/oauth/authorize`)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId ?? '',
      redirect_uri: CALLBACK,
      scope: 'read:pets',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'forms',
    }))
      authorize.searchParams.set(k, v)
    await page.goto(authorize.toString())
    expect(await focused()).toBe('email')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill('not-my-password-at-all')
    await submit('Sign in')
    expect(await focused()).toBe('password')
  })
})
