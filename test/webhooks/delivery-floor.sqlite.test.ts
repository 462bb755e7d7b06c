import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { startReceiver } from './receiver.ts'

/** Concurrent clients, each sending its next create as soon as the last is answered. */
const CLIENTS = 48
/** Pets created during the load whose deliveries must arrive while it goes on. */
const DELIVERED_DURING_LOAD = 10

// The floor of webhook progress under saturating load (docs/webhooks.md, "The lag to expect") on
// SQLite: the requests and the deliveries share one process and one writer, and the worker keeps
// its share of the process's time (src/webhooks/cpu-share.ts) however many requests wait.
describeDb('webhook deliveries while creates saturate the service', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.destroy()
  })

  it('go on while the creates keep coming', async () => {
    const receiver = await startReceiver(() => 200)
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      WEBHOOKS_ALLOW_INSECURE: 'true',
      RATE_LIMIT_RPS: '0',
      SHUTDOWN_DRAIN_SECONDS: '0',
    })
    const { apiKey } = await accountWithKey(database.db, { email: 'floor@example.com' })
    const api = `http://127.0.0.1:${server.port}`
    const headers = { authorization: basic(apiKey), 'content-type': 'application/x-www-form-urlencoded' }
    let loading = true
    try {
      const endpoint = await fetch(`${api}/v1/webhook_endpoint`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ url: receiver.url, 'enabled_events[]': 'pet.created' }),
      })
      expect(endpoint.status).toBe(201)

      const created = new Set<string>()
      const statuses = new Map<number, number>()
      const client = async (n: number) => {
        for (let i = 0; loading; i++) {
          const answer = await fetch(`${api}/v1/pet`, {
            method: 'POST',
            headers,
            body: new URLSearchParams({ name: `Load ${n}-${i}` }),
          })
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
          if (answer.status === 201) created.add(String(((await answer.json()) as { id: unknown }).id))
          else await answer.arrayBuffer()
        }
      }
      const load = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)))
      const deliveredDuringLoad = () => {
        let n = 0
        for (const r of receiver.received) {
          const event = JSON.parse(r.body) as { data: { object: { id: unknown } } }
          if (created.has(String(event.data.object.id))) n++
        }
        return n
      }
      await waitUntil(
        `${DELIVERED_DURING_LOAD} deliveries arrive while the creates go on`,
        async () => deliveredDuringLoad() >= DELIVERED_DURING_LOAD,
        60_000,
      )
      // The creates were still coming when they arrived: the worker did not wait for them to end.
      const before = created.size
      await waitUntil('more creates are answered', async () => created.size > before)
      loading = false
      await load
      expect([...statuses.keys()]).toEqual([201])
    } finally {
      loading = false
      await receiver.close()
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  }, 90_000)
})
