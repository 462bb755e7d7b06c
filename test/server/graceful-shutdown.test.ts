import { connect } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { PET_SERVICE_BIN, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

describeDb('graceful shutdown', () => {
  let database: TestDatabase
  let apiKey: string
  beforeAll(async () => {
    database = await createTestDatabase()
    const { account } = await findOrCreateAccount(database.db, 'shutdown@example.com')
    apiKey = (await createApiKey(database.db, { accountId: account.id })).apiKey
  })
  afterAll(() => database.destroy())

  it('finishes a request in flight on SIGTERM, then exits cleanly with the write kept', async () => {
    const { child, port, exited } = await startServerProcess(PET_SERVICE_BIN, { DATABASE_URL: database.url })
    const body = 'name=InFlight&species=dog'
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    let response = ''
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString()
    })
    const auth = Buffer.from(`${apiKey}:`).toString('base64')
    // Send the headers and half the body, then ask the server to stop.
    socket.write(
      `POST /v1/pet HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 8)}`,
    )
    await new Promise((r) => setTimeout(r, 300))
    child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 300))
    socket.write(body.slice(8))
    await new Promise<void>((resolve) => socket.on('close', () => resolve()))

    expect(response).toMatch(/^HTTP\/1\.1 201/)
    expect(await exited).toBe(0)
    const pets = await database.db.selectFrom('pets').select('name').execute()
    expect(pets.map((p) => p.name)).toContain('InFlight')
  })
})
