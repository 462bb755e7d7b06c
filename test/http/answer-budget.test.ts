import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'
import { holdUnread } from '../helpers/server-http.ts'

/** The JSON body of a small answer read whole in its first bytes. */
function bodyOf(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>
}

describeDb('large answers still being sent share a memory budget, per client address and in all', () => {
  let live: LiveServer
  let port: number
  let auth: Record<string, string>
  // Pets as large as the schema allows: 20 photo URLs of 2,000 characters each, 200 of them in one
  // findByStatus answer (about 8 MB), more than the kernel's socket buffers take for a client.
  const LIST = '/v2/pet/findByStatus?status=available'
  beforeAll(async () => {
    live = await startLiveServer({
      RESPONSE_BUFFER_BYTES: String(1024 * 1024),
      HTTP_WRITE_TIMEOUT_SECONDS: '2',
      TRUST_PROXY: 'loopback',
    })
    port = Number(new URL(live.url).port)
    const client = await newClient(live)
    auth = bearer(await accessToken(live.app, client))
    const photoUrls = Array.from(
      { length: 20 },
      (_, i) => `https://example.com/${String(i).padStart(1990, 'p')}`,
    )
    for (let i = 0; i < 200; i++) {
      const res = await live.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: auth,
        payload: { name: `Large ${i}`, photoUrls, status: 'available' },
      })
      expect(res.statusCode, res.body).toBe(200)
    }
  }, 120_000)
  afterAll(() => live.close())

  it('answers 429 too_many_downloads to an address whose large answer is still unread, and serves it once read', async () => {
    const first = holdUnread(port, LIST, { ...auth, connection: 'close' })
    expect(await first.status).toBe(200)
    const second = holdUnread(port, LIST, auth)
    const refused = await second.firstBytes
    expect(refused).toMatch(/^HTTP\/1\.1 429/)
    expect(refused).toMatch(/content-type: application\/problem\+json/i)
    expect(refused).toMatch(/retry-after: \d+/i)
    expect(bodyOf(refused).code).toBe('too_many_downloads')
    second.socket.destroy()

    expect(await first.readToEnd()).toBeGreaterThan(8_000_000)
    const again = await fetch(`${live.url}${LIST}`, { headers: auth })
    expect(again.status).toBe(200)
    expect((await again.json()) as unknown[]).toHaveLength(200)
  })

  it('answers 503 to another address while the answers in flight hold the whole budget', async () => {
    const first = holdUnread(port, LIST, { ...auth, connection: 'close' })
    expect(await first.status).toBe(200)
    const other = holdUnread(port, LIST, { ...auth, 'x-forwarded-for': '203.0.113.7' })
    const refused = await other.firstBytes
    expect(refused).toMatch(/^HTTP\/1\.1 503/)
    expect(bodyOf(refused).code).toBe('service_unavailable')
    other.socket.destroy()
    await first.readToEnd()
  })

  it('cuts off a large answer its client reads none of for HTTP_WRITE_TIMEOUT_SECONDS, which frees its share', async () => {
    const stalled = holdUnread(port, LIST, auth)
    expect(await stalled.status).toBe(200)
    expect(live.app.deps.answers.heldBytes).toBeGreaterThan(8_000_000)
    // Cut off after 2 to 4 s of no progress: its share comes back, and the client, reading at
    // last, gets what the kernel held and then the end, short of the whole answer.
    await waitUntil('the stalled answer is cut off', async () => live.app.deps.answers.heldBytes === 0)
    expect(await stalled.readToEnd()).toBeLessThan(8_000_000)
    const next = await fetch(`${live.url}${LIST}`, { headers: auth })
    expect(next.status).toBe(200)
  })
})
