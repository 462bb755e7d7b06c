import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, createTestApp, withKey } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'
import { call, expectAlive, expectUnavailable, runLoad } from '../helpers/server-http.ts'
import { TcpProxy } from '../helpers/tcp-proxy.ts'

// Short bounds, so that every wait below is short too (the defaults are in docs/configuration.md).
const TIMEOUTS = {
  DB_CONNECT_TIMEOUT_SECONDS: '1',
  DB_STATEMENT_TIMEOUT_SECONDS: '2',
  DB_LOCK_TIMEOUT_SECONDS: '1',
  READY_TIMEOUT_SECONDS: '1',
  RATE_LIMIT_RPS: '0',
}
/** Generous: the configured bounds above plus the time a loaded CI machine may add. */
const ANSWER_WITHIN_MS = 6000

describeDb('the service while its database goes away', () => {
  let database: TestDatabase
  let apiKey: string
  let server: ServerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    apiKey = (await accountWithKey(database.db, { email: 'faults@example.com' })).apiKey
  })
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await database.destroy()
  })

  const createPet = (name: string) => call(server.port, '/v1/pet', { apiKey, form: { name } })
  const listPets = () => call(server.port, '/v1/pet?limit=5', { apiKey })
  const readiness = () => call(server.port, '/readyz')
  const serving = async () => (await listPets()).status === 200 && (await readiness()).status === 200

  if (DIALECT === 'postgres') {
    let proxy: TcpProxy
    const applicationName = `pet-faults-${process.pid}-${Date.now()}`
    /** Only this test's own server connections: they carry the application name set here. */
    const terminateServerConnections = async (): Promise<number> => {
      const admin = new pg.Client({ connectionString: POSTGRES_URL })
      await admin.connect()
      try {
        const { rows } = await admin.query(
          'select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = $1',
          [applicationName],
        )
        return rows.length
      } finally {
        await admin.end()
      }
    }

    beforeAll(async () => {
      const target = new URL(POSTGRES_URL)
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) })
      const url = new URL(proxy.rewrite(database.url))
      url.searchParams.set('application_name', applicationName)
      server = await startServerProcess(PET_SERVICE_BIN, { ...TIMEOUTS, DATABASE_URL: url.toString() })
    })
    afterAll(() => proxy?.close())

    it('survives PostgreSQL terminating its connections under load, answering 503 at worst', async () => {
      let answered = 0
      const stop = runLoad(6, async (i) => {
        const answer = await (i % 2 === 0 ? createPet(`Load${i}`) : listPets())
        answered++
        return answer
      })
      for (let round = 0; round < 3; round++) {
        await waitUntil('the server has connections again', async () => {
          expectAlive(server)
          return (await terminateServerConnections()) > 0
        })
        // The load meets the cut connections before the next round cuts them again.
        const seen = answered
        await waitUntil('the load is answered after the cut', async () => answered >= seen + 6)
      }
      const answers = await stop()
      expectAlive(server)
      expect(answers.length).toBeGreaterThan(20)
      for (const answer of answers) {
        if (answer.status === 503) expectUnavailable(answer)
        else expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status)
      }
      await waitUntil('the service serves again', serving)
    })

    it('answers 503 with Retry-After, within its bounds, while PostgreSQL refuses connections; then recovers', async () => {
      await proxy.refuse()
      try {
        const answers = await Promise.all([createPet('Refused'), listPets(), createPet('Refused2')])
        for (const answer of answers) {
          expectUnavailable(answer)
          expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
        }
        const ready = await readiness()
        expectUnavailable(ready, 'service_unavailable')
        expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS)
        expectAlive(server)
      } finally {
        await proxy.restore()
      }
      const ms = await waitUntil('the service serves again', serving)
      expect(ms).toBeLessThan(10_000)
      expect((await createPet('AfterRefusal')).status).toBe(201)
    })

    it('answers 503 within its bounds while PostgreSQL stalls (a blackholed network); then recovers', async () => {
      expect((await listPets()).status).toBe(200)
      proxy.blackhole()
      try {
        const answers = await Promise.all([createPet('Stalled'), listPets(), listPets()])
        for (const answer of answers) {
          expectUnavailable(answer)
          expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
        }
        const ready = await readiness()
        expectUnavailable(ready, 'service_unavailable')
        // /readyz has a bound of its own (READY_TIMEOUT_SECONDS=1), shorter than any database wait.
        expect(ready.ms).toBeLessThan(3000)
        expectAlive(server)
      } finally {
        await proxy.restore()
      }
      const ms = await waitUntil('the service serves again', serving)
      expect(ms).toBeLessThan(10_000)
    })

    it('answers 503 past the lock timeout while another session holds a table lock', async () => {
      const locker = new pg.Client({ connectionString: POSTGRES_URL })
      await locker.connect()
      try {
        await locker.query('begin')
        await locker.query(`lock table ${database.schema}.pets in access exclusive mode`)
        const answers = await Promise.all([listPets(), createPet('Locked')])
        for (const answer of answers) {
          expectUnavailable(answer)
          expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
        }
        // The database itself answers: the service is ready, only the locked table waits.
        expect((await readiness()).status).toBe(200)
      } finally {
        await locker.query('rollback')
        await locker.end()
      }
      expect((await listPets()).status).toBe(200)
      expectAlive(server)
    })
  } else {
    beforeAll(async () => {
      server = await startServerProcess(PET_SERVICE_BIN, { ...TIMEOUTS, DATABASE_URL: database.url })
    })

    it('answers writes 503 past the lock timeout while another process holds the write lock, serving the rest', async () => {
      const other = new BetterSqlite3(database.location.replace(/^sqlite:/, ''))
      try {
        other.exec('begin immediate')
        const writes = [createPet('Locked1'), createPet('Locked2'), createPet('Locked3')]
        // Waiting for the lock must not stop the process from answering anything else.
        const health = await call(server.port, '/healthz')
        expect(health.status).toBe(200)
        expect(health.ms).toBeLessThan(500)
        expect((await listPets()).status).toBe(200)
        expect((await readiness()).status).toBe(200)
        for (const answer of await Promise.all(writes)) {
          expectUnavailable(answer)
          expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
        }
      } finally {
        other.exec('rollback')
        other.close()
      }
      expect((await createPet('Unlocked')).status).toBe(201)
      expectAlive(server)
    })

    it('answers 507 when the database file is full, and /readyz says so until a write succeeds again', async () => {
      const t = await createTestApp()
      try {
        const { apiKey: key } = await t.newAccount()
        const as = withKey(t.app, key)
        const writer = t.database.sqlite!
        const pages = writer.pragma('page_count', { simple: true }) as number
        writer.pragma(`max_page_count = ${pages}`)
        let full: Awaited<ReturnType<typeof as>> | undefined
        for (let i = 0; i < 500 && full === undefined; i++) {
          const res = await as({
            method: 'POST',
            url: '/v1/pet',
            payload: { name: `Filler${i}`, breed: 'x'.repeat(150) },
          })
          if (res.statusCode !== 201) full = res
        }
        expect(full?.statusCode).toBe(507)
        expect(full?.headers['content-type']).toContain('application/problem+json')
        expect(full?.json().code).toBe('storage_full')
        const ready = await t.app.inject({ method: 'GET', url: '/readyz' })
        expect(ready.statusCode).toBe(503)
        expect(ready.json().detail).toMatch(/full/)

        writer.pragma(`max_page_count = ${pages * 100}`)
        expect((await as({ method: 'POST', url: '/v1/pet', payload: { name: 'Room' } })).statusCode).toBe(201)
        expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
      } finally {
        await t.close()
      }
    })
  }
})
