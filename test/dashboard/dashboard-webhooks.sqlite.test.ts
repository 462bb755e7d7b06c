import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startWebhookWorker } from '../../src/app.ts'
import { endpointFailed } from '../../src/webhooks/webhooks-repository.ts'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import {
  browserSuite,
  chromiumPath,
  launchChromium,
  screenshot,
  tickScopes,
  unlabelledControls,
} from '../helpers/browser.ts'
import { startReceiver } from '../webhooks/receiver.ts'

/**
 * The dashboard's Webhooks pages in headless Chromium, with the delivery worker running and a
 * receiver on loopback (insecure mode allows it). SQLite only, like the other browser tests.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`dashboard webhooks in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let apiKey = ''
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let worker: ReturnType<typeof startWebhookWorker>
  let endpointId = ''
  let secret = ''

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    // The worker adds an onResponse hook, so it starts before the app is ready.
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' }, { ready: false })
    worker = startWebhookWorker(t.app, t.database)
    receiver = await startReceiver()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
    await receiver?.close()
    await t?.close()
  })

  /** Reloads the endpoint's page until its delivery log shows `count` rows of `type`. */
  const logShows = async (type: string, count: number) => {
    await expect
      .poll(
        async () => {
          await page.reload()
          const rows = page.getByTestId('deliveries-table').locator('tbody tr', { hasText: type })
          return (await rows.count()) >= count ? rows.first().textContent() : ''
        },
        { timeout: 15_000, interval: 100 },
      )
      .toMatch(/succeeded\s*200/)
  }

  it('adds an endpoint from the Webhooks page; its signing secret is shown once', async () => {
    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill('hooks@example.com')
    await page.getByLabel('Password').fill('lighthouse-harbour-37')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Label').fill('Hooks')
    await tickScopes(page)
    await page.getByRole('button', { name: 'Create key' }).click()
    apiKey = (await page.getByTestId('new-key').textContent()) ?? ''

    await page.getByRole('link', { name: 'Webhooks' }).click()
    expect(await unlabelledControls(page)).toEqual([])
    // A URL the policy refuses is named, and nothing is created.
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hooks')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    expect(await page.getByRole('alert').textContent()).toMatch(/http/)
    await page.getByLabel('Endpoint URL').fill(receiver.url)
    await page.getByLabel('* (every event)').uncheck()
    await page.getByLabel('pet.*').check()
    await page.getByLabel('Description (optional)').fill('Local receiver')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    secret = (await page.getByTestId('new-secret').textContent()) ?? ''
    expect(secret).toMatch(/^whsec_/)
    await screenshot(page, 'webhook-secret')
    await page.getByRole('link', { name: 'I have stored it safely' }).click()
    endpointId = /\/dashboard\/webhooks\/(we_\w+)/.exec(page.url())?.[1] ?? ''
    expect(endpointId).not.toBe('')
    expect(await page.content()).not.toContain(secret)
  })

  it('shows each delivery in the log, and resends one and sends a test event on request', async () => {
    const created = await fetch(`${base}/v1/pet`, {
      method: 'POST',
      headers: { authorization: basic(apiKey), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Rex',
    })
    expect(created.status).toBe(201)
    await logShows('pet.created', 1)
    await page.getByRole('button', { name: 'Send test event' }).click()
    expect(await page.getByRole('status').textContent()).toContain('webhook.test')
    await logShows('webhook.test', 1)
    await page
      .getByTestId('deliveries-table')
      .locator('tbody tr', { hasText: 'pet.created' })
      .getByRole('button', { name: 'Resend' })
      .click()
    expect(await page.getByRole('status').textContent()).toContain('queued')
    await logShows('pet.created', 2)
    await screenshot(page, 'webhook')
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(
      expect.arrayContaining(['pet.created', 'webhook.test']),
    )
  })

  it('rotates the secret, and disables and enables the endpoint', async () => {
    await page.getByLabel('The current secret keeps signing').selectOption('24')
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const rotated = (await page.getByTestId('new-secret').textContent()) ?? ''
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    expect(await page.getByRole('main').textContent()).toContain('keeps signing deliveries too for 24 hours')
    await page.getByRole('link', { name: 'I have stored it safely' }).click()
    await page.getByRole('button', { name: 'Disable' }).click()
    expect(await page.getByTestId('endpoint-status').textContent()).toContain('disabled')
    await page.getByRole('button', { name: 'Enable' }).click()
    expect(await page.getByTestId('endpoint-status').textContent()).toBe('enabled')
  })

  it('warns, on the list and on the endpoint, when an endpoint was disabled for failing', async () => {
    const now = new Date().toISOString()
    await endpointFailed(t.database.db, endpointId, {
      now,
      failingBefore: now,
      reason: 'Every delivery failed for 5 days.',
      updatedAt: now,
    })
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click()
    const warning = page.locator('.notice.warning')
    expect(await warning.textContent()).toContain('disabled because deliveries kept failing')
    expect(await warning.textContent()).toContain('Every delivery failed for 5 days.')
    await warning.getByRole('link').click()
    expect(await page.locator('.notice.warning').textContent()).toContain('Fix the receiver')
    await page.getByRole('button', { name: 'Enable' }).click()
    expect(await page.getByTestId('endpoint-status').textContent()).toBe('enabled')
  })

  it('answers 404 for another account’s endpoint', async () => {
    const other = await t.newAccount()
    const theirs = await fetch(`${base}/v1/webhook_endpoint`, {
      method: 'POST',
      headers: { authorization: basic(other.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, enabled_events: ['*'] }),
    })
    const { id } = (await theirs.json()) as { id: string }
    expect((await page.goto(`${base}/dashboard/webhooks/${id}`))?.status()).toBe(404)
    await page.goto(`${base}/dashboard/webhooks`)
    expect(await page.content()).not.toContain(id)
  })
})
