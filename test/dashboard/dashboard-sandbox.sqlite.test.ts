import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import {
  browserSuite,
  chromiumPath,
  launchChromium,
  screenshot,
  tickScopes,
  unlabelledControls,
} from '../helpers/browser.ts'

/** The live/sandbox switch, the sandbox page and its reset, in headless Chromium (SQLite only). */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`dashboard sandbox in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let liveKey = ''
  let sandboxKey = ''

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const createPet = (key: string, name: string) =>
    fetch(`${base}/v1/pet`, {
      method: 'POST',
      headers: { authorization: basic(key), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name }),
    })
  const petNames = () => page.getByTestId('pets-table').locator('tbody tr td:nth-child(2)').allTextContents()
  const current = () => page.locator('.mode-switch [aria-current="true"]').textContent()
  const newKey = async (label: string) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Label').fill(label)
    await tickScopes(page)
    await page.getByRole('button', { name: 'Create key' }).click()
    return (await page.getByTestId('new-key').textContent()) ?? ''
  }

  it('shows Live in the header until a sandbox is created, then switches to it', async () => {
    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill('sandbox@example.com')
    await page.getByLabel('Password').fill('lighthouse-harbour-37')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    expect(await current()).toBe('Live')
    expect(await page.locator('.sandbox-banner').count()).toBe(0)
    liveKey = await newKey('Live')
    expect(liveKey).toMatch(/^pet_sk_[0-9A-Za-z]{36}$/)
    expect((await createPet(liveKey, 'Live Rex')).status).toBe(201)

    // No sandbox yet: the switch leads to the page that creates one.
    await page.locator('.mode-switch').getByRole('button', { name: 'Sandbox' }).click()
    await page.waitForURL(`${base}/dashboard/sandbox`)
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByRole('button', { name: 'Create sandbox' }).click()
    await page.waitForURL(`${base}/dashboard?notice=sandbox_created`)
    expect(await current()).toBe('Sandbox')
    await expect(page.locator('.sandbox-banner').textContent()).resolves.toContain('You are in the sandbox')
    await screenshot(page, 'sandbox')
  })

  it("shows only the sandbox's data in the sandbox, and only the live account's in live", async () => {
    sandboxKey = await newKey('Sandbox CI')
    expect(sandboxKey).toMatch(/^pet_sk_test_[0-9A-Za-z]{36}$/)
    expect((await createPet(sandboxKey, 'Sandy')).status).toBe(201)
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Pets' }).click()
    expect(await petNames()).toEqual(['Sandy'])
    // The keys page lists the sandbox's keys only.
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click()
    expect(await page.getByText('Sandbox CI').count()).toBeGreaterThan(0)
    expect(await page.getByRole('cell', { name: 'Live', exact: true }).count()).toBe(0)

    await page.locator('.mode-switch').getByRole('button', { name: 'Live' }).click()
    await page.waitForURL(`${base}/dashboard`)
    expect(await current()).toBe('Live')
    expect(await page.locator('.sandbox-banner').count()).toBe(0)
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Pets' }).click()
    expect(await petNames()).toEqual(['Live Rex'])
  })

  it('resets the sandbox after a confirmation: its data goes, its key keeps working, live is untouched', async () => {
    await page.locator('.mode-switch').getByRole('button', { name: 'Sandbox' }).click()
    await page.waitForURL(`${base}/dashboard`)
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Sandbox' }).click()
    await page.getByRole('link', { name: 'Reset sandbox…' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Reset sandbox')
    await page.getByRole('button', { name: "Delete the sandbox's data" }).click()
    await page.waitForURL(`${base}/dashboard/sandbox?notice=sandbox_reset`)
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('sandbox')
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Pets' }).click()
    expect(await page.getByTestId('pets-table').locator('tbody tr td:nth-child(2)').count()).toBe(0)

    const list = (key: string) =>
      fetch(`${base}/v1/pet`, { headers: { authorization: basic(key) } }).then(
        async (r) =>
          [r.status, ((await r.json()) as { data: { name: string }[] }).data.map((p) => p.name)] as const,
      )
    expect(await list(sandboxKey)).toEqual([200, []])
    expect(await list(liveKey)).toEqual([200, ['Live Rex']])
  })

  it('keeps the switch in sight and the page unclipped at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${base}/dashboard`)
    const box = await page.locator('.mode-switch').boundingBox()
    expect(box).not.toBeNull()
    expect(box!.x).toBeGreaterThanOrEqual(0)
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    expect(box!.y).toBeLessThan(844)
    expect(await page.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390)
    await expect(page.locator('.sandbox-banner').isVisible()).resolves.toBe(true)
    await screenshot(page, 'sandbox-phone')
    await page.setViewportSize({ width: 1280, height: 820 })
  })
})
