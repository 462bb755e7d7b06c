import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { multipart, pngOfSize } from '../helpers/multipart.ts'
import { clientBasic, oauthClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'
import { holdUnread } from '../helpers/server-http.ts'

const MiB = 1024 * 1024

/** Resident memory of a process, in bytes (Linux). */
function rss(pid: number): number {
  const kB = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kB) * 1024
}

describeDb('answers to clients that do not read them', () => {
  let database: TestDatabase
  let server: ServerProcess
  let token: string
  let imagePath: string
  beforeAll(async () => {
    database = await createTestDatabase()
    const { accountId } = await accountWithKey(database.db)
    const client = await oauthClient(database.db, { accountId })
    server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      RATE_LIMIT_RPS: '0',
      HTTP_WRITE_TIMEOUT_SECONDS: '5',
    })
    const base = `http://127.0.0.1:${server.port}`
    const tokenAnswer = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: clientBasic(client.clientId, client.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    })
    token = ((await tokenAnswer.json()) as { access_token: string }).access_token
    const pet = (await (
      await fetch(`${base}/v2/pet`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Big', photoUrls: [] }),
      })
    ).json()) as { id: number }
    const body = multipart([
      { name: 'file', filename: 'big.png', type: 'image/png', data: pngOfSize(10 * MiB) },
    ])
    const uploaded = await fetch(`${base}/v2/pet/${pet.id}/uploadImage`, {
      method: 'POST',
      headers: { ...body.headers, authorization: `Bearer ${token}` },
      body: body.payload,
    })
    expect(uploaded.status, await uploaded.clone().text()).toBe(200)
    const photoUrls = (
      (await (
        await fetch(`${base}/v2/pet/${pet.id}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as { photoUrls: string[] }
    ).photoUrls
    imagePath = new URL(photoUrls[0]!).pathname
  }, 120_000)
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await server?.exited
    await database.destroy()
  })

  it('keeps its memory bounded while 60 clients leave a 10 MiB image unread, then cuts them', async () => {
    const fetchWhole = async () => {
      const image = await fetch(`http://127.0.0.1:${server.port}${imagePath}`)
      expect(image.status).toBe(200)
      expect((await image.arrayBuffer()).byteLength).toBe(10 * MiB)
    }
    // Once served whole first: the buffers that serving needs at all are in place.
    await fetchWhole()
    const before = rss(server.child.pid!)
    const held = Array.from({ length: 60 }, () => holdUnread(server.port, imagePath))
    const statuses = await Promise.all(held.map((h) => h.status))
    // Each answer has begun; what the server keeps for them is what it holds from now on.
    let peak = rss(server.child.pid!)
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      peak = Math.max(peak, rss(server.child.pid!))
    }
    // Each client holding its own copy of the image came to hundreds of MB.
    expect(peak - before, `RSS ${before} → ${peak} bytes`).toBeLessThan(150 * MiB)
    // One address's share (a quarter of RESPONSE_BUFFER_BYTES, 64 MiB) is 32 answers of a 512 KiB
    // chunk each; past it the answer is a 429 problem (unless, on a slow machine, the first were
    // cut off before the last arrived).
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(32)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])

    // No progress for HTTP_WRITE_TIMEOUT_SECONDS (5 s): the server cuts those answers off...
    const started = held.filter((_, i) => statuses[i] === 200)
    await waitUntil(
      'the server cuts the stalled answers off',
      async () => (server.output().match(/answer cut off/g) ?? []).length >= started.length,
      60_000,
    )
    for (const received of await Promise.all(started.map((h) => h.readToEnd()))) {
      expect(received).toBeLessThan(10 * MiB)
    }
    // ...and a client that reads gets the whole image.
    await fetchWhole()
  }, 120_000)
})
