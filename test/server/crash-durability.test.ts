import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'

const CLIENTS = 6
const CRASHES = Number(process.env.CRASH_TEST_CRASHES ?? 4)

/** mulberry32: a small seeded generator, so a failing run can be replayed with CRASH_TEST_SEED. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describeDb('crash durability: kill -9 under create load', () => {
  let database: TestDatabase
  let apiKey: string
  let server: ServerProcess | undefined

  beforeAll(async () => {
    database = await createTestDatabase()
    apiKey = (await accountWithKey(database.db, { email: 'crash-load@example.com' })).apiKey
  })
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await server?.exited
    await database.destroy()
  })

  it('keeps every acknowledged create with its event, creates once per Idempotency-Key, and stays intact', async () => {
    const seed = Number(process.env.CRASH_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))
    console.log(`crash durability [${DIALECT}]: seed ${seed} (CRASH_TEST_SEED=${seed} replays it)`)
    const random = seeded(seed)

    let base: string | undefined
    let stopping = false
    /** key -> the pet id its 201 named. */
    const acknowledged = new Map<string, number>()
    const unexpected: string[] = []
    let retriesAfterNoAnswer = 0

    /** One client: creates pets one after another, retrying a create with no answer under the same key. */
    async function client(n: number): Promise<void> {
      for (let i = 0; !stopping; i++) {
        const key = `client${n}-pet${i}`
        for (;;) {
          const target = base
          if (target === undefined) {
            await sleep(20)
            continue
          }
          let response: Response
          try {
            response = await fetch(`${target}/v1/pet`, {
              method: 'POST',
              headers: {
                authorization: basic(apiKey),
                'content-type': 'application/x-www-form-urlencoded',
                'idempotency-key': key,
              },
              body: `name=${key}&species=dog`,
              signal: AbortSignal.timeout(15_000),
            })
          } catch {
            retriesAfterNoAnswer++
            await sleep(20)
            continue
          }
          const text = await response.text().catch(() => undefined)
          if (text === undefined) {
            retriesAfterNoAnswer++
            continue
          }
          if (response.status !== 201) {
            // A 409 here would be a claim left by a dead process: the key is not "still running".
            unexpected.push(`${key}: ${response.status} ${text}`)
            return
          }
          acknowledged.set(key, (JSON.parse(text) as { id: number }).id)
          break
        }
      }
    }

    const start = async () => {
      server = await startServerProcess(PET_SERVICE_BIN, {
        DATABASE_URL: database.url,
        RATE_LIMIT_RPS: '0',
      })
      base = `http://127.0.0.1:${server.port}`
    }

    await start()
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n))
    for (let crash = 0; crash < CRASHES; crash++) {
      const before = acknowledged.size
      await sleep(300 + Math.floor(random() * 1200))
      // Crash only under load: some creates must have been answered since the last restart.
      await waitUntil(
        'a create is answered since the last restart',
        () => acknowledged.size !== before || unexpected.length > 0,
        60_000,
        20,
      )
      if (unexpected.length > 0) break
      server!.child.kill('SIGKILL')
      base = undefined
      await server!.exited
      await start()
    }
    // Let the last server answer creates too before stopping it.
    const beforeStop = acknowledged.size
    await waitUntil(
      'the last server answers creates',
      async () => acknowledged.size > beforeStop || unexpected.length > 0,
    )
    stopping = true
    await Promise.all(clients)
    server!.child.kill('SIGTERM')
    expect(await server!.exited).toBe(0)
    server = undefined

    console.log(
      `crash durability [${DIALECT}]: ${acknowledged.size} creates acknowledged, ${retriesAfterNoAnswer} retries after no answer, ${CRASHES} crashes`,
    )
    expect(unexpected).toEqual([])
    expect(retriesAfterNoAnswer).toBeGreaterThan(0)

    const pets = await database.db.selectFrom('pets').select(['id', 'name']).execute()
    const byName = new Map<string, number[]>()
    for (const pet of pets) byName.set(pet.name, [...(byName.get(pet.name) ?? []), pet.id])
    // One pet per key: retries after a crash created nothing twice.
    expect([...byName].filter(([, ids]) => ids.length > 1)).toEqual([])
    // Every acknowledged create is there, as answered, with its event.
    const events = await database.db
      .selectFrom('events')
      .select('object_id')
      .where('type', '=', 'pet.created')
      .execute()
    const created = new Set(events.map((e) => e.object_id))
    const missing = [...acknowledged].filter(
      ([key, id]) => byName.get(key)?.[0] !== id || !created.has(String(id)),
    )
    expect(missing).toEqual([])
    // And nothing else: every pet came from one of the clients' keys, and has its event.
    expect(pets.length).toBe(acknowledged.size)
    expect(created.size).toBe(pets.length)

    if (DIALECT === 'sqlite') {
      expect(database.sqlite!.pragma('integrity_check', { simple: true })).toBe('ok')
    }
  }, 90_000)
})
