import { afterAll, beforeAll, expect, it } from 'vitest'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import {
  accountWithEndpoint,
  expectEveryEventOnceInOrder,
  makeChanges,
  WEBHOOK_SERVER_ENV,
} from './acceptance.ts'
import { startReceiver } from './receiver.ts'

/**
 * The 10,000 changes on SQLite; 2,000 on PostgreSQL by default to keep the suite's time
 * (WEBHOOK_ACCEPTANCE_CHANGES=10000 runs the full count there too).
 */
const CHANGES = Number(process.env.WEBHOOK_ACCEPTANCE_CHANGES ?? (DIALECT === 'sqlite' ? 10_000 : 2_000))

describeDb('webhooks acceptance: every event once, in order per object, across kill -9', () => {
  let database: TestDatabase
  let server: ServerProcess | undefined
  let receiver: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    database = await createTestDatabase()
    receiver = await startReceiver()
  })
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await server?.exited
    await receiver.close()
    await database.destroy()
  })

  it(`delivers all ${CHANGES} changes to a loopback receiver through a kill -9 and a restart`, async () => {
    const started = Date.now()
    const start = async () => {
      server = await startServerProcess(PET_SERVICE_BIN, {
        DATABASE_URL: database.url,
        ...WEBHOOK_SERVER_ENV,
      })
      base = `http://127.0.0.1:${server.port}`
    }
    let base: string | undefined
    await start()
    const { apiKey, accountId } = await accountWithEndpoint(database, base!, receiver.url)

    let acknowledged = 0
    const changes = makeChanges({
      apiKey,
      target: () => base,
      changes: CHANGES,
      clients: 8,
      perPet: 5,
      onAcknowledged: () => {
        acknowledged++
      },
    })
    // Crash mid-stream: after a third of the changes, once deliveries are flowing.
    let failed: unknown
    changes.catch((error: unknown) => {
      failed = error
    })
    await waitUntil(
      'a third of the changes is acknowledged and deliveries flow',
      () => failed !== undefined || (acknowledged >= CHANGES / 3 && receiver.received.length > 0),
      240_000,
      50,
    )
    if (failed === undefined) {
      server!.child.kill('SIGKILL')
      base = undefined
      await server!.exited
      await start()
    }
    await changes
    const result = await expectEveryEventOnceInOrder(database, accountId, receiver, 240_000)
    const seconds = Math.round((Date.now() - started) / 1000)
    console.log(
      `webhooks acceptance [${DIALECT}]: ${result.events} events, ${result.received} requests received (duplicates ${result.received - result.events}), ${seconds} s`,
    )
    expect(result.events).toBeGreaterThanOrEqual(CHANGES)
    server!.child.kill('SIGTERM')
    expect(await server!.exited).toBe(0)
    server = undefined
  }, 480_000)
})
