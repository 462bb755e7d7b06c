import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Browser } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { browserSuite, chromiumPath, launchChromium } from '../helpers/browser.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const executablePath = chromiumPath()

const suite = browserSuite(executablePath) // skipped only without Chromium, never in CI

// The built ESM of @pet-service/client loaded by a real browser (headless Chromium) from a page
// on the service's origin, calling the live service with the browser's own fetch.
suite(`TypeScript client in a browser${executablePath === undefined ? ' (chromium not installed)' : ''}`, () => {
  let live: LiveServer
  let apiKey: string
  let browser: Browser
  let origin: Server
  let originUrl: string
  const out = mkdtempSync(join(tmpdir(), 'pet-service-browser-'))

  beforeAll(async () => {
    if (executablePath === undefined) throw new Error('CI needs chromium (.ci/run installs it)')
    live = await startLiveServer()
    apiKey = (await live.newAccount()).apiKey
    // Its own build, so this test never races with `npm pack` rebuilding dist/.
    await promisify(execFile)(process.execPath, [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(ROOT, 'clients/typescript/tsconfig.json'),
      '--outDir',
      out,
      '--declaration',
      'false',
    ])
    // One origin serves the page, the module files, and (proxied) the API.
    origin = createServer((req, res) => {
      const url = req.url ?? '/'
      if (url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>')
        return
      }
      if (url.startsWith('/client/')) {
        const path = normalize(join(out, url.slice('/client/'.length)))
        if (!path.startsWith(out)) return res.writeHead(404).end()
        try {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(path))
        } catch {
          res.writeHead(404).end()
        }
        return
      }
      const upstream = httpRequest(
        new URL(url, live.url),
        { method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        },
      )
      req.pipe(upstream)
    })
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
    browser = await launchChromium(executablePath)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise<void>((resolve) => (origin ? origin.close(() => resolve()) : resolve()))
    await live?.close()
    rmSync(out, { recursive: true, force: true })
  })

  it('creates, lists with for await, and raises typed errors using the browser’s fetch', async () => {
    const page = await browser.newPage()
    await page.goto(`${originUrl}/`)
    // A string, since the test project is compiled without the DOM library.
    const result = await page.evaluate(`(async () => {
      const { PetService, NotFoundError } = await import('/client/index.js')
      const client = new PetService({ apiKey: ${JSON.stringify(apiKey)}, baseUrl: location.origin })
      const pet = await client.pets.create({ name: 'Browser', species: 'dog' })
      await client.pets.create({ name: 'Second' })
      const ids = []
      for await (const p of client.pets.list({ limit: 1 })) ids.push(p.id)
      const missing = await client.pets.get(999999).catch((e) => e)
      return {
        name: pet.name,
        requestId: pet.lastResponse.requestId,
        ids: ids.length,
        notFound: missing instanceof NotFoundError,
        code: missing.code,
        userAgent: navigator.userAgent,
      }
    })()`)
    expect(result).toMatchObject({
      name: 'Browser',
      requestId: expect.stringMatching(/^req_/),
      ids: 2,
      notFound: true,
      code: 'pet_not_found',
      userAgent: expect.stringContaining('Chrome'),
    })
    await page.close()
  })

  it('verifies and signs webhooks with the browser’s Web Crypto, as standardwebhooks does', async () => {
    const page = await browser.newPage()
    await page.goto(`${originUrl}/`)
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const body = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'pet.created',
      data: { object: { id: 1 } },
    })
    const now = new Date()
    const headers = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('evt_1', now, body),
    }
    const result = (await page.evaluate(`(async () => {
      const { webhooks } = await import('/client/index.js')
      const [body, headers, secret] = ${JSON.stringify([body, headers, secret])}
      const event = await webhooks.verify(body, new Headers(headers), secret)
      const tampered = await webhooks.verify(body + ' ', headers, secret).catch((e) => e.reason)
      const signed = await webhooks.sign(body, secret, { id: 'evt_2' })
      return { type: event.type, tampered, signed }
    })()`)) as { type: string; tampered: string; signed: Record<string, string> }
    expect(result).toMatchObject({ type: 'pet.created', tampered: 'no_valid_signature' })
    expect(new Webhook(secret).verify(body, result.signed)).toEqual(JSON.parse(body))
    await page.close()
  })
})
