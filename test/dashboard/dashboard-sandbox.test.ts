import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, form, type TestApp, withKey } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

/**
 * The dashboard's live/sandbox switch over app.inject, on both databases: each mode's pages show
 * only that account's data, the reset deletes only the sandbox's, and one session cannot reach
 * another account's sandbox. (In Chromium: dashboard-sandbox.sqlite.test.ts.)
 */
describeDb('dashboard sandbox', () => {
  let t: TestApp
  let browser: SessionClient
  let liveKey: string
  let sandboxKey: string

  beforeAll(async () => {
    t = await createTestApp()
    browser = new SessionClient(t.app)
    expect((await browser.signUp('modes@example.com')).statusCode).toBe(303)
    liveKey = await browser.createKey('Production integration')
  })
  afterAll(() => t.close())

  const pets = async () => (await browser.get('/dashboard/pets')).body

  it('creates the sandbox, switches to it, and shows each mode its own pets and keys', async () => {
    await browser.get('/dashboard/sandbox')
    expect(browser.lastPage).toContain('Create sandbox')
    const created = await browser.post('/dashboard/sandbox', {})
    expect(created.headers.location).toBe('/dashboard?notice=sandbox_created')
    sandboxKey = await browser.createKey('Sandbox')
    expect(sandboxKey).toMatch(/^pet_sk_test_/)
    expect(browser.lastPage).toContain('class="sandbox-banner"')
    expect(browser.lastPage).toContain('mode-option current sandbox')

    for (const [key, name] of [
      [liveKey, 'Livia'],
      [sandboxKey, 'Sandy'],
    ] as const) {
      expect(
        (await withKey(t.app, key)({ method: 'POST', url: '/v1/pet', ...form({ name }) })).statusCode,
      ).toBe(201)
    }
    const inSandbox = await pets()
    expect(inSandbox).toContain('Sandy')
    expect(inSandbox).not.toContain('Livia')
    expect((await browser.get('/dashboard/keys')).body).not.toContain('Production integration')

    await browser.post('/dashboard/sandbox/switch', { mode: 'live' })
    const inLive = await pets()
    expect(inLive).toContain('Livia')
    expect(inLive).not.toContain('Sandy')
    expect(inLive).not.toContain('class="sandbox-banner"')
    expect(inLive).toContain('mode-option current live')
  })

  it("asks the Overview's examples for the key of the mode shown", async () => {
    await browser.post('/dashboard/sandbox/switch', { mode: 'sandbox' })
    expect((await browser.get('/dashboard')).body).toContain('PET_SERVICE_API_KEY=pet_sk_test_...')
    await browser.post('/dashboard/sandbox/switch', { mode: 'live' })
    const live = (await browser.get('/dashboard')).body
    expect(live).toContain('PET_SERVICE_API_KEY=pet_sk_...')
    expect(live).not.toContain('pet_sk_test_')
  })

  it('refuses a switch to an unknown mode, and a form without its CSRF token', async () => {
    await browser.get('/dashboard')
    expect((await browser.post('/dashboard/sandbox/switch', { mode: 'admin' })).statusCode).toBe(400)
    await browser.get('/dashboard')
    expect((await browser.post('/dashboard/sandbox/reset', {}, { csrf: false })).statusCode).toBe(403)
    expect(await pets()).toContain('Livia')
  })

  it("resets only the signed-in account's sandbox, whichever mode is shown, and keeps its keys", async () => {
    const other = new SessionClient(t.app)
    await other.signUp('other-modes@example.com')
    await other.post('/dashboard/sandbox', {})
    const otherKey = await other.createKey('Other sandbox')
    await withKey(t.app, otherKey)({ method: 'POST', url: '/v1/pet', ...form({ name: 'Otto' }) })

    await browser.get('/dashboard/sandbox/reset')
    const reset = await browser.post('/dashboard/sandbox/reset', {})
    expect(reset.headers.location).toBe('/dashboard/sandbox?notice=sandbox_reset')
    const list = async (key: string) =>
      ((await withKey(t.app, key)({ method: 'GET', url: '/v1/pet' })).json().data as { name: string }[]).map(
        (p) => p.name,
      )
    expect(await list(sandboxKey)).toEqual([])
    expect(await list(liveKey)).toEqual(['Livia'])
    expect(await list(otherKey)).toEqual(['Otto'])
  })
})
