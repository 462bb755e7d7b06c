import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TYPICAL_SCOPES } from '../../src/dashboard/views/scopes.ts'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium, screenshot, tickScopes } from '../helpers/browser.ts'
import { pkcePair } from '../helpers/oauth.ts'

/**
 * Every dashboard page at a phone's width (390 CSS px, an iPhone 12–15), signed in and with data
 * in every table: nothing may make the page wider than the screen (a sideways-scrolling page
 * hides the navigation and half of each form). Wide tables scroll inside their own box instead.
 * SQLite only, like the other browser tests.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI
const PHONE = 390
const CALLBACK = 'https://portal.example.com/oauth/callback'
const EMAIL = 'margaret.hamilton.apollo-guidance@example.com'
const PASSWORD = 'lighthouse-harbour-37'

suite(`dashboard at phone width${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let apiKey = ''

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    t = await createTestApp()
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({
      viewport: { width: PHONE, height: 844 },
      isMobile: true,
      hasTouch: true,
      colorScheme: 'light',
    })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const api = (path: string, body: object) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  /** Screenshots the page and answers how wide it scrolls (must be the screen's width). */
  async function pageWidth(name: string): Promise<number> {
    await page.waitForLoadState('load')
    await screenshot(page, `phone-${name}`)
    return page.evaluate('document.scrollingElement.scrollWidth')
  }

  it('fits the sign-in and sign-up pages', async () => {
    await page.goto(`${base}/dashboard/sign-in`)
    expect(await pageWidth('sign-in')).toBeLessThanOrEqual(PHONE)
    await page.goto(`${base}/dashboard/sign-up`)
    expect(await pageWidth('sign-up')).toBeLessThanOrEqual(PHONE)
  })

  it('fits every page of a signed-in account with data in its tables', async () => {
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/notice=welcome/)

    await page.goto(`${base}/dashboard/keys`)
    await page.getByLabel('Label').fill('Checkout service (production, eu-west)')
    await tickScopes(page, [...TYPICAL_SCOPES, 'write:orders'])
    await page.getByRole('button', { name: 'Create key' }).click()
    apiKey = (await page.getByTestId('new-key').textContent()) ?? ''
    expect(apiKey).toMatch(/^pet_sk_/)
    const widths: Record<string, number> = { 'new-key': await pageWidth('new-key') }

    await page.goto(`${base}/dashboard/clients`)
    await page.getByLabel('Name').fill('Vet clinic portal')
    await page.getByLabel('Redirect URIs').fill(CALLBACK)
    await tickScopes(page, ['read:pets'])
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByTestId('client-id').waitFor()
    widths['new-client'] = await pageWidth('new-client')

    const owner = (await (
      await api('/v1/user', {
        name: 'Grace Brewster Murray Hopper',
        email: 'grace.brewster.murray.hopper@navy-research.example.com',
        phone: '+1 555 0100',
      })
    ).json()) as { id: string }
    const pets = [
      { name: 'Sir Reginald Fluffington III', species: 'cat', breed: 'Norwegian Forest', owner_id: owner.id },
      { name: 'Rex', species: 'dog', breed: 'collie', status: 'pending', owner_id: owner.id },
      { name: 'Polly', species: 'parrot', status: 'sold' },
    ]
    let petId = 0
    for (const pet of pets) {
      const res = await api('/v1/pet', pet)
      expect(res.status).toBe(201)
      petId = ((await res.json()) as { id: number }).id
    }
    await api('/v1/user', { name: 'Ann Lee', email: 'ann@example.com' })
    const order = (await (
      await api('/v1/order', { pet_id: petId, quantity: 2, ship_date: '2031-07-01T09:30:00Z' })
    ).json()) as { id: number }

    // An app this account authorised (authorization code + PKCE), for the grants table.
    const { challenge } = pkcePair()
    await page.route(`${CALLBACK}**`, (route) =>
      route.fulfill({ contentType: 'text/plain', body: 'callback' }),
    )
    const authorize = new URL(`${base}/oauth/authorize`)
    const clientId = (await page.getByTestId('client-id').textContent()) ?? ''
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      scope: 'read:pets',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'phone',
    }))
      authorize.searchParams.set(k, v)
    await page.goto(authorize.toString())
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    widths['oauth-sign-in'] = await pageWidth('oauth-sign-in')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Allow' }).waitFor()
    widths['oauth-consent'] = await pageWidth('oauth-consent')
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL(`${CALLBACK}**`)

    await page.goto(`${base}/dashboard/keys`)
    const revoke = await page.getByRole('link', { name: /^Revoke Checkout/ }).getAttribute('href')
    const roll = await page.getByRole('link', { name: /^Roll Checkout/ }).getAttribute('href')
    await page.goto(`${base}/dashboard/clients`)
    const rotate = await page.getByRole('link', { name: /^Rotate the secret of/ }).getAttribute('href')
    const remove = await page.getByRole('link', { name: /^Delete Vet/ }).getAttribute('href')

    const pages: Record<string, string> = {
      overview: '/dashboard',
      keys: '/dashboard/keys',
      'revoke-key': revoke!,
      'roll-key': roll!,
      clients: '/dashboard/clients',
      'rotate-secret': rotate!,
      'delete-client': remove!,
      pets: '/dashboard/pets',
      pet: `/dashboard/pets/${petId}`,
      users: '/dashboard/users',
      user: `/dashboard/users/${owner.id}`,
      orders: '/dashboard/orders',
      order: `/dashboard/orders/${order.id}`,
      account: '/dashboard/account',
    }
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(`${base}${path}`)
      expect(page.url(), name).toContain(path)
      widths[name] = await pageWidth(name)
    }
    const tooWide = Object.entries(widths).filter(([, width]) => width > PHONE)
    expect(tooWide).toEqual([])
    // The tables are there (with their data), scrolling inside their own box when wider.
    await page.goto(`${base}/dashboard/pets`)
    expect(await page.getByTestId('pets-table').textContent()).toContain('Sir Reginald Fluffington III')
    await page.goto(`${base}/dashboard/clients`)
    expect(await page.getByTestId('grants-table').textContent()).toContain('Vet clinic portal')
  })
})
