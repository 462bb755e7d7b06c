import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic, createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import {
  browserSuite,
  chromiumPath,
  launchChromium,
  screenshot,
  unlabelledControls,
} from '../helpers/browser.ts'

/** The dashboard's Logs pages in headless Chromium against a listening server (SQLite only). */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`dashboard logs in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let key: { apiKey: string; keyId: string }
  const password = 'never-shown-in-logs-53'

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' })
    page = await context.newPage()
    page.setDefaultTimeout(5000)
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const post = (path: string, body: Record<string, unknown>) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: basic(key.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const rows = () => page.getByTestId('logs-table').locator('tbody tr td:nth-child(2)').allTextContents()

  it('lists the account’s requests newest first at 1280 px, and filters them', async () => {
    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill('logs@example.com')
    await page.getByLabel('Password').fill('lighthouse-harbour-37')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    key = await accountWithKey(t.database.db, { email: 'logs@example.com' })
    expect((await post('/v1/pet', { name: 'Rex' })).status).toBe(201)
    expect((await post('/v1/user', { name: 'Ann', password })).status).toBe(400)
    await t.app.deps.requestLogs.flush()

    await page.getByRole('link', { name: 'Logs' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Logs')
    expect(await unlabelledControls(page)).toEqual([])
    expect(await rows()).toEqual(['POST /v1/user', 'POST /v1/pet'])
    expect(await page.getByTestId('logs-table').textContent()).toContain(key.keyId)
    await screenshot(page, 'logs')

    await page.getByLabel('Status').selectOption('4xx')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/status_class=4xx/, { timeout: 5000 })
    expect(await rows()).toEqual(['POST /v1/user'])
    await page.getByRole('link', { name: 'Clear' }).click()
    await page.getByLabel('Path begins with').fill('/v1/pet')
    await page.getByLabel('Method').selectOption('POST')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/path=/, { timeout: 5000 })
    expect(await rows()).toEqual(['POST /v1/pet'])
    await page.getByLabel('Path begins with').fill('/v2')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/path=%2Fv2/, { timeout: 5000 })
    expect(await page.getByRole('main').textContent()).toContain('No requests match these filters.')
  })

  it('shows a failure with its bodies and headers, secrets redacted', async () => {
    await page.goto(`${base}/dashboard/logs?status_class=4xx`)
    await page.getByTestId('logs-table').getByRole('link', { name: 'POST /v1/user' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('POST /v1/user')
    const body = JSON.parse((await page.getByTestId('request-body').textContent()) ?? '')
    expect(body).toEqual({ name: 'Ann', password: '***' })
    const headers = JSON.parse((await page.getByTestId('request-headers').textContent()) ?? '')
    expect(headers.authorization).toBe('***')
    expect(JSON.parse((await page.getByTestId('response-body').textContent()) ?? '').status).toBe(400)
    expect(await page.content()).not.toContain(password)
    expect(await page.content()).not.toContain(key.apiKey)
    await screenshot(page, 'log-entry')
  })

  it('fits a 390 px phone: no sideways scrolling on the list or an entry', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'light' })
    const small = await phone.newPage()
    await small.goto(`${base}/dashboard/sign-in`)
    await small.getByLabel('Email').fill('logs@example.com')
    await small.getByLabel('Password').fill('lighthouse-harbour-37')
    await small.getByRole('button', { name: 'Sign in' }).click()
    await small.waitForURL(/\/dashboard/)
    await small.goto(`${base}/dashboard/logs`)
    expect(await small.getByTestId('logs-table').locator('tbody tr').count()).toBe(2)
    expect(await small.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390)
    await small.getByTestId('logs-table').getByRole('link', { name: 'POST /v1/user' }).click()
    await small.waitForURL(/\/dashboard\/logs\/rlog_/)
    expect(await small.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390)
    await screenshot(small, 'log-entry-phone')
    await phone.close()
  })

  it('answers 404 for another account’s entry, and never lists it', async () => {
    const other = await t.newAccount()
    await withKey(t.app, other.apiKey)({ method: 'POST', url: '/v1/pet', ...form({ name: 'Theirs' }) })
    await t.app.deps.requestLogs.flush()
    const theirs = (await withKey(t.app, other.apiKey)({ method: 'GET', url: '/v1/request_log' })).json().data
    const theirId = theirs.at(-1).id as string
    const response = await page.goto(`${base}/dashboard/logs/${theirId}`)
    expect(response?.status()).toBe(404)
    await page.goto(`${base}/dashboard/logs`)
    expect(await page.content()).not.toContain(theirId)
    expect(await page.content()).not.toContain(other.keyId)
  })
})
