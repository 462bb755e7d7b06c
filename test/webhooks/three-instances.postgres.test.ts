import { afterAll, beforeAll, expect, it } from 'vitest'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import {
  accountWithEndpoint,
  expectEveryEventOnceInOrder,
  makeChanges,
  WEBHOOK_SERVER_ENV,
} from './acceptance.ts'
import { startReceiver } from './receiver.ts'

const CHANGES = Number(process.env.WEBHOOK_SCALE_OUT_CHANGES ?? 2_000)

/** Three workers share the deliveries of one PostgreSQL database (PostgreSQL only, see vitest.config.ts). */
describeDb('webhooks across three instances on one PostgreSQL', () => {
  let database: TestDatabase
  let servers: ServerProcess[] = []
  let receiver: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    database = await createTestDatabase()
    receiver = await startReceiver()
    servers = await Promise.all(
      [0, 1, 2].map(() =>
        startServerProcess(PET_SERVICE_BIN, { DATABASE_URL: database.url, ...WEBHOOK_SERVER_ENV }),
      ),
    )
  }, 90_000)
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL')
    await Promise.all(servers.map((s) => s.exited))
    await receiver.close()
    await database.destroy()
  })

  it(`delivers all ${CHANGES} changes once, in order per object, never the same event twice at once`, async () => {
    const bases = servers.map((s) => `http://127.0.0.1:${s.port}`)
    const { apiKey, accountId } = await accountWithEndpoint(database, bases[0]!, receiver.url)
    await makeChanges({ apiKey, target: (n) => bases[n % 3], changes: CHANGES, clients: 9, perPet: 5 })
    const result = await expectEveryEventOnceInOrder(database, accountId, receiver, 120_000)
    expect(result.events).toBeGreaterThanOrEqual(CHANGES)
    // Never two sends of one event at once (the receiver counts overlapping requests per webhook-id).
    expect(receiver.concurrentDuplicates()).toBe(0)
    console.log(`webhooks on three instances: ${result.events} events, ${result.received} requests received`)
    for (const server of servers) server.child.kill('SIGTERM')
    expect(await Promise.all(servers.map((s) => s.exited))).toEqual([0, 0, 0])
  }, 300_000)
})
