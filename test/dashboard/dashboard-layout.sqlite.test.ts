import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ALL_SCOPES } from '../../src/access/scopes.ts'
import { startWebhookWorker } from '../../src/app.ts'
import { TYPICAL_SCOPES } from '../../src/dashboard/views/scopes.ts'
import { basic, createTestApp, type TestApp } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium, tickScopes } from '../helpers/browser.ts'
import { waitUntil } from '../helpers/poll.ts'

/**
 * Every signed-in page, with long data in every table, at a laptop's width (1280 CSS px) and a
 * phone's (390): each table shows every column inside its box, no two blocks of a page overlap
 * or touch, every text control wears the form style, and every time reads as the real time and
 * the relative time. The checks run in the page, so one failure names every page at fault.
 * SQLite only, like the other browser tests.
 */
const executablePath = chromiumPath()
const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI
const WIDTHS = [1280, 390]

/** Tables whose box is narrower than the table: a column is cut off (or must be scrolled to). */
const CUT_TABLES = `[...document.querySelectorAll('.table-wrap')]
  .filter((wrap) => wrap.scrollWidth > wrap.clientWidth)
  .map((wrap) => (wrap.querySelector('caption') || wrap).textContent.trim())`

/** Pairs of blocks (neither inside the other) that overlap or lie closer than 8 px; a page wider than the screen. */
const CROWDED_BLOCKS = `(() => {
  const blocks = [...document.querySelectorAll('main .card, main .table-wrap, main .pager, main .grid, main .notice, main .page-head')]
    .filter((el) => el.getClientRects().length > 0)
  const name = (el) => el.className + ' "' + el.textContent.replace(/s+/g, ' ').trim().slice(0, 30) + '"'
  const near = (a, b) => a.left < b.right + 8 && b.left < a.right + 8 && a.top < b.bottom + 8 && b.top < a.bottom + 8
  const crowded = []
  blocks.forEach((a, i) => blocks.slice(i + 1).forEach((b) => {
    if (a.contains(b) || b.contains(a)) return
    if (near(a.getBoundingClientRect(), b.getBoundingClientRect())) crowded.push(name(a) + ' / ' + name(b))
  }))
  const width = document.scrollingElement.scrollWidth
  return width > innerWidth ? [...crowded, 'the page is ' + width + ' px wide'] : crowded
})()`

/** Visible text controls without the form style (its rounded border and height). */
const UNSTYLED_CONTROLS = `[...document.querySelectorAll('input, select, textarea')]
  .filter((el) => !['checkbox', 'radio', 'hidden'].includes(el.type) && el.getClientRects().length > 0)
  .filter((el) => getComputedStyle(el).borderTopLeftRadius !== '8px' || parseFloat(getComputedStyle(el).minHeight) < 40)
  .map((el) => el.outerHTML)`

/** Rows of controls (a filter form, the key form's label and expiry) whose boxes differ in height. */
const UNEVEN_ROWS = `[...document.querySelectorAll('.row')].flatMap((row) => {
  const heights = [...row.querySelectorAll('input, select, .btn')]
    .filter((el) => el.type !== 'hidden' && el.getClientRects().length > 0)
    .map((el) => Math.round(el.getBoundingClientRect().height))
  return new Set(heights).size > 1 ? [(row.getAttribute('aria-label') || 'row') + ': ' + heights.join(', ') + ' px'] : []
})`

/** Ids in table cells whose text takes more than one line. */
const BROKEN_IDS = `[...document.querySelectorAll('td .mono:not(.url)')].filter((el) => {
  const range = document.createRange()
  range.selectNodeContents(el)
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1
}).map((el) => el.textContent)`

/** The text of every <time> in the page, whitespace made plain spaces. */
const TIMES = `[...document.querySelectorAll('main time')].map((el) => el.textContent.replace(/\\s+/g, ' ').trim())`

const REAL_AND_RELATIVE =
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \((just now|in a moment|\d+ (minute|hour|day|month|year)s? ago|in \d+ (minute|hour|day|month|year)s?)\)$/

suite(`dashboard layout in headless Chromium${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let t: TestApp
  let base: string
  let browser: Browser
  let page: Page
  let worker: ReturnType<typeof startWebhookWorker>
  let receiver: Server
  let apiKey = ''
  const pages: Record<string, string> = {}

  const api = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    expect(res.status, `${method} ${path}`).toBeLessThan(300)
    return res.json() as Promise<Record<string, unknown> & { id: string; data: Record<string, unknown>[] }>
  }

  beforeAll(async () => {
    if (executablePath === undefined)
      throw new Error('chromium is not installed (apt-get install -y chromium)')
    // The worker adds an onResponse hook, so it starts before the app is ready.
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' }, { ready: false })
    worker = startWebhookWorker(t.app, t.database)
    // A receiver that refuses user events with a long answer, so the log shows a long excerpt.
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      req.on('end', () => {
        const refused = (JSON.parse(body) as { type: string }).type.startsWith('user.')
        res.writeHead(refused ? 422 : 200, { 'content-type': 'application/json' })
        res.end(refused ? JSON.stringify({ error: 'x'.repeat(60), detail: 'y'.repeat(80) }) : '{"ok":true}')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchChromium(executablePath)
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)

    await page.goto(`${base}/dashboard/sign-up`)
    await page.getByLabel('Email').fill('layout.with.a.rather.long.address@example.com')
    await page.getByLabel('Password').fill('lighthouse-harbour-37')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/notice=welcome/)
    await page.goto(`${base}/dashboard/keys`)
    await page.getByLabel('Label').fill('Checkout service')
    await tickScopes(page, ALL_SCOPES)
    await page.getByRole('button', { name: 'Create key' }).click()
    apiKey = (await page.getByTestId('new-key').textContent()) ?? ''
    await page.goto(`${base}/dashboard/keys`)
    await page.getByLabel('Label').fill('CI')
    await tickScopes(page, [...TYPICAL_SCOPES, 'write:orders'])
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByTestId('new-key').waitFor()
    await page.goto(`${base}/dashboard/clients`)
    await page.getByLabel('Name').fill('Vet clinic portal for the whole county')
    await page
      .getByLabel('Redirect URIs')
      .fill('https://portal.vet-clinic.example.com/oauth/callback/after-consent')
    await tickScopes(page, ['read:pets'])
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByTestId('client-id').waitFor()

    const { port } = receiver.address() as AddressInfo
    const endpoint = await api('POST', '/v1/webhook_endpoint', {
      url: `http://127.0.0.1:${port}/webhooks/pet-service/receiver-with-a-long-path`,
      enabled_events: ['pet.*', 'user.*', 'order.*'],
      description: 'The staging receiver of the checkout service, behind the load balancer',
    })
    const owner = await api('POST', '/v1/user', {
      name: 'Grace Brewster Murray Hopper',
      email: 'grace.brewster.murray.hopper@navy-research.example.com',
      phone: '+1 555 0100',
    })
    const pet = await api('POST', '/v1/pet', {
      name: 'Sir Reginald Fluffington III',
      species: 'cat',
      breed: 'Norwegian Forest',
      owner_id: owner.id,
    })
    const order = await api('POST', '/v1/order', {
      pet_id: pet.id,
      quantity: 2,
      ship_date: '2031-07-01T09:30:00Z',
    })
    await api('POST', `/v1/webhook_endpoint/${endpoint.id}/test`, {})
    await waitUntil('the log holds a delivery of every event', async () => {
      const log = await api('GET', `/v1/webhook_endpoint/${endpoint.id}/delivery?limit=100`)
      return log.data.length >= 4
    })
    const event = (await api('GET', '/v1/event?limit=1')).data[0]!
    Object.assign(pages, {
      overview: '/dashboard',
      keys: '/dashboard/keys',
      clients: '/dashboard/clients',
      pets: '/dashboard/pets',
      pet: `/dashboard/pets/${pet.id}`,
      users: '/dashboard/users',
      user: `/dashboard/users/${owner.id}`,
      orders: '/dashboard/orders',
      order: `/dashboard/orders/${order.id}`,
      events: '/dashboard/events',
      event: `/dashboard/events/${String(event.id)}`,
      webhooks: '/dashboard/webhooks',
      webhook: `/dashboard/webhooks/${endpoint.id}`,
      account: '/dashboard/account',
    })
  })
  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
    await new Promise((resolve) => receiver?.close(resolve))
    await t?.close()
  })

  /** What `probe` finds on every page at every width, by page and width ([] when all is well). */
  async function onEveryPage(probe: string, widths = WIDTHS): Promise<string[]> {
    const found: string[] = []
    for (const width of widths) {
      await page.setViewportSize({ width, height: 900 })
      for (const [name, path] of Object.entries(pages)) {
        await page.goto(`${base}${path}`)
        for (const problem of (await page.evaluate(probe)) as string[])
          found.push(`${width} ${name}: ${problem}`)
      }
    }
    return found
  }

  it('shows every column of every table inside its box, at 1280 and 390 px', async () => {
    expect(await onEveryPage(CUT_TABLES)).toEqual([])
  })

  it('keeps every id in a table on one line at 1280 px', async () => {
    expect(await onEveryPage(BROKEN_IDS, [1280])).toEqual([])
  })

  it('keeps the blocks of every page apart, and no page wider than the screen', async () => {
    expect(await onEveryPage(CROWDED_BLOCKS)).toEqual([])
  })

  it('styles every text field, list and text area of every form alike', async () => {
    expect(await onEveryPage(UNSTYLED_CONTROLS)).toEqual([])
  })

  it('lines up the fields, lists and buttons of a row', async () => {
    expect(await onEveryPage(UNEVEN_ROWS)).toEqual([])
  })

  it('shows every time as the real time and how long ago it was', async () => {
    await page.setViewportSize({ width: 1280, height: 900 })
    const wrong: string[] = []
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(`${base}${path}`)
      for (const text of (await page.evaluate(TIMES)) as string[])
        if (!REAL_AND_RELATIVE.test(text)) wrong.push(`${name}: ${text}`)
    }
    expect(wrong).toEqual([])
  })

  it("shows each delivery's real time, as the API gives it, beside its relative time", async () => {
    await page.goto(`${base}${pages.webhook}`)
    const id = pages.webhook!.split('/').at(-1)
    const log = await api('GET', `/v1/webhook_endpoint/${id}/delivery?limit=100`)
    const shown = await page
      .getByTestId('deliveries-table')
      .locator('tbody tr td:first-child')
      .allTextContents()
    const real = (iso: unknown) =>
      String(iso)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
    expect(shown.map((text) => text.replace(/\s+/g, ' ').trim())).toEqual(
      log.data.map((d) =>
        expect.stringMatching(new RegExp(`^${real(d.attempted_at)} \\((just now|\\d+ minutes? ago)\\)$`)),
      ),
    )
  })
})
