import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { accountWithKey } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { call } from '../helpers/server-http.ts'

/**
 * Each process reserves pet ids a block at a time (src/db/account-ids.ts). A clean stop gives
 * the unused rest back, so ids go on after a restart; a crash forfeits it, leaving a gap.
 */
describeDb('pet ids across restarts of the server', () => {
  let database: TestDatabase
  let apiKey: string
  beforeAll(async () => {
    database = await createTestDatabase()
    apiKey = (await accountWithKey(database.db, { email: 'restarts@example.com' })).apiKey
  })
  afterAll(() => database.destroy())
  const started: ServerProcess[] = []
  // A failed assertion must not leave a server running.
  afterEach(() => {
    for (const server of started.splice(0)) if (server.child.exitCode === null) server.child.kill('SIGKILL')
  })

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      SHUTDOWN_DRAIN_SECONDS: '0',
    })
    started.push(server)
    return server
  }

  async function createPets(server: ServerProcess, count: number): Promise<number[]> {
    const ids: number[] = []
    for (let i = 0; i < count; i++) {
      const created = await call(server.port, '/v1/pet', { apiKey, form: { name: `Pet ${i}` } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      ids.push(created.body.id as number)
    }
    return ids
  }

  it('continues the ids after a clean stop, and only skips ahead (never back) after kill -9', async () => {
    const first = await start()
    expect(await createPets(first, 3)).toEqual([1, 2, 3])
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    const second = await start()
    expect(await createPets(second, 2)).toEqual([4, 5])
    second.child.kill('SIGKILL')
    await second.exited

    const third = await start()
    const [afterCrash] = await createPets(third, 1)
    expect(afterCrash).toBeGreaterThan(5)
    third.child.kill('SIGTERM')
    expect(await third.exited).toBe(0)
    // Three processes started from the sources one after another: several seconds each while
    // CI runs test files side by side on two cores.
  }, 120_000)
})
