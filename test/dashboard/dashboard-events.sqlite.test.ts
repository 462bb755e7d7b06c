import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TYPICAL_SCOPES } from '../../src/dashboard/views/scopes.ts'
import { basic, createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import {
  browserSuite,
  chromiumPath,
  launchChromium,
  screenshot,
  tickScopes,
  unlabelledControls,
} from '../helpers/browser.ts'

/** The dashboard's Events pages in headless Chromium against a listening server (SQLite only). */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

suite(`dashboard events in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
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
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: basic(apiKey), ...init.headers } })
  const post = (path: string, fields: Record<string, string>, method = 'POST') =>
    api(path, {
      method,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    })
  const rowTypes = () => page.getByTestId('events-table').locator('tbody tr td:first-child').allTextContents()

  it('lists the account’s events newest first, and filters them by type', async () => {
    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill('events@example.com')
    await page.getByLabel('Password').fill('lighthouse-harbour-37')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${base}/dashboard?notice=welcome`)
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Label').fill('Events')
    await tickScopes(page, [...TYPICAL_SCOPES, 'read:events'])
    await page.getByRole('button', { name: 'Create key' }).click()
    apiKey = (await page.getByTestId('new-key').textContent()) ?? ''
    const user = (await (await post('/v1/user', { name: 'Grace' })).json()) as { id: string }
    const pet = (await (await post('/v1/pet', { name: 'Rex', owner_id: user.id })).json()) as { id: number }
    expect((await post(`/v1/pet/${pet.id}`, { name: 'Max' }, 'PATCH')).status).toBe(200)

    await page.getByRole('link', { name: 'Events' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Events')
    expect(await unlabelledControls(page)).toEqual([])
    expect(await rowTypes()).toEqual(['pet.updated', 'pet.created', 'user.created'])
    await screenshot(page, 'events')

    await page.getByLabel('Type').selectOption('user.*')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/type=user/)
    expect(await rowTypes()).toEqual(['user.created'])
    await page.getByRole('link', { name: 'Clear' }).click()
    expect(await rowTypes()).toHaveLength(3)
  })

  it('shows one event with its JSON, exactly as the API answers it, linking to its object', async () => {
    await page.getByTestId('events-table').getByRole('link', { name: 'pet.updated' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('pet.updated')
    const id = /\/dashboard\/events\/(evt_\w+)$/.exec(page.url())?.[1]
    expect(id).toBeDefined()
    const shown = JSON.parse((await page.getByTestId('event-json').textContent()) ?? '')
    expect(shown).toEqual(await (await api(`/v1/event/${id}`)).json())
    expect(shown.data.previous_attributes).toEqual({ name: 'Rex' })
    await screenshot(page, 'event')
    await page
      .getByRole('main')
      .getByRole('link', { name: String(shown.data.object.id) })
      .click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Max')
  })

  it('answers 404 for another account’s event', async () => {
    const other = await t.newAccount()
    await withKey(t.app, other.apiKey)({ method: 'POST', url: '/v1/pet', ...form({ name: 'Theirs' }) })
    const theirs = (await withKey(t.app, other.apiKey)({ method: 'GET', url: '/v1/event' })).json().data[0].id
    const response = await page.goto(`${base}/dashboard/events/${theirs}`)
    expect(response?.status()).toBe(404)
    await page.goto(`${base}/dashboard/events`)
    expect(await page.content()).not.toContain(theirs)
  })
})
