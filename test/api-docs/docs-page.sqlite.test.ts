import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium, screenshot } from '../helpers/browser.ts'

/**
 * `/docs` (Swagger UI) in headless Chromium, reached the way a deployment reaches it: plain http
 * under a host name that is not localhost. Chromium treats only localhost as potentially
 * trustworthy, so a policy with `upgrade-insecure-requests` turns every asset into an https
 * request that fails there, and the page stays blank.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`/docs in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let port: number
  let browser: Browser

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = Number(new URL(address).port)
    browser = await launchChromium(executablePath, ['--host-resolver-rules=MAP pets.test 127.0.0.1'])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('renders every operation over http at a non-localhost host name, with no failed request', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`))
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.url()} ${response.status()}`)
    })
    await page.goto(`http://pets.test:${port}/docs`)
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 })
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const documented = Object.values<object>(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0)
    expect(documented).toBeGreaterThan(20)
    expect(await page.locator('.opblock').count()).toBe(documented)
    expect(await page.locator('.opblock-summary-path', { hasText: '/v1/pet/{id}' }).count()).toBeGreaterThan(
      0,
    )
    expect(failed).toEqual([])
  })

  it("shows the product's own title, favicon and logo, not Swagger's or Fastify's", async () => {
    const page = await browser.newPage()
    await page.goto(`http://pets.test:${port}/docs`)
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 })
    expect(await page.title()).toBe('Pet Service API reference')
    const logo = page.locator('.topbar img')
    await logo.waitFor()
    expect(await logo.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/)
    const name = `getComputedStyle(document.querySelector('.topbar a.link'), '::after').content`
    expect(await page.evaluate(name)).toBe('"Pet Service API"')
    await page.setViewportSize({ width: 1280, height: 900 })
    await screenshot(page, 'api-reference', { fullPage: false })
    const icon = await page.locator('link[rel="icon"]').getAttribute('href')
    expect(icon).toMatch(/icon\.svg$/)
    const served = await fetch(new URL(icon!, `http://127.0.0.1:${port}/docs/`))
    expect(served.headers.get('content-type')).toContain('image/svg+xml')
  })
})
