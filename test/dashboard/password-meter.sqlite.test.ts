import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { checkPasswordStrength } from '../../src/accounts/password-strength.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium } from '../helpers/browser.ts'

/**
 * The sign-up page's strength meter (dashboard.js) is a hint, and the server's zxcvbn-ts verdict
 * decides; the hint must never call a password good that the server then refuses.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI
const EMAIL = 'new.user@example.com'

suite(`password meter in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
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
    page = await browser.newPage()
    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill(EMAIL)
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const meter = async (password: string) => {
    await page.getByLabel('Password').fill(password)
    return (await page.locator('#password-meter-text').textContent()) ?? ''
  }

  it('calls the commonest patterns weak, as the server refuses them', async () => {
    for (const password of ['Password1!', 'Qwerty123!', 'Summer2024!', 'Jennifer2019!', 'Dragonfly88!']) {
      expect(await meter(password), password).toBe('Strength: Weak')
      expect(checkPasswordStrength(password, EMAIL).ok, password).toBe(false)
    }
  })

  it('never calls good or strong a password the server refuses', async () => {
    for (const password of [
      'Password1!',
      'Welcome2025#',
      'iloveyou12345',
      'P@ssw0rd2024',
      'aaaaaaaaaaaaaa1!',
      '1234567890abc',
      'lighthouse-harbour-37',
      'purple-otter-sings-42',
      'kT9#vq2!Lm-x',
    ]) {
      const hint = await meter(password)
      if (/Good|Strong/.test(hint))
        expect(checkPasswordStrength(password, EMAIL), `${password}: ${hint}`).toMatchObject({ ok: true })
    }
    expect(await meter('lighthouse-harbour-37')).toMatch(/Good|Strong/)
  })
})
