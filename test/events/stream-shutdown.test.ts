import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { openSse } from './sse-client.ts'

describeDb('event streams across SIGTERM and across instances', () => {
  let database: TestDatabase
  let apiKey: string
  beforeAll(async () => {
    database = await createTestDatabase()
    const { account } = await findOrCreateAccount(database.db, 'streams@example.com')
    apiKey = (await createApiKey(database.db, { accountId: account.id })).apiKey
  })
  afterAll(() => database.destroy())

  it('shows on a stream of one instance the changes made through another, then ends the streams on SIGTERM and exits', async () => {
    const env = { DATABASE_URL: database.url, SHUTDOWN_DRAIN_SECONDS: '0.2' }
    const [watched, writer] = await Promise.all([
      startServerProcess(PET_SERVICE_BIN, env),
      startServerProcess(PET_SERVICE_BIN, env),
    ])
    try {
      const url = `http://127.0.0.1:${watched.port}/v1/event/stream`
      const streams = [
        await openSse(url, { authorization: basic(apiKey) }),
        await openSse(`${url}?type=pet.*`, { authorization: basic(apiKey) }),
      ]
      const created = await fetch(`http://127.0.0.1:${writer.port}/v1/pet`, {
        method: 'POST',
        headers: { authorization: basic(apiKey), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Elsewhere',
      })
      expect(created.status).toBe(201)
      for (const sse of streams) {
        expect(JSON.parse((await sse.next()).data!).data.object.name).toBe('Elsewhere')
      }
      watched.child.kill('SIGTERM')
      for (const sse of streams) await sse.ended()
      expect(await watched.exited).toBe(0)
    } finally {
      for (const server of [watched, writer]) server.child.kill('SIGKILL')
    }
  })
})
