import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { sqlitePath } from '../../src/config/config.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'

/**
 * Makes the next `INSERT INTO pets` of a pet named `name` wait until release() is called: a lock
 * held by the test on PostgreSQL; on SQLite, where a lock would stop the request before it
 * starts, a trigger that runs a very long query. Neither touches the service's code.
 */
async function stallPetInserts(database: TestDatabase, name: string) {
  if (DIALECT === 'postgres') {
    const locker = new pg.Client({ connectionString: POSTGRES_URL })
    await locker.connect()
    await locker.query(`set search_path = ${database.schema}`)
    await locker.query('begin')
    await locker.query('lock table pets in exclusive mode')
    return {
      /** True once a server connection waits for the lock. */
      async reached() {
        const { rows } = await locker.query(
          `select count(*)::int as n from pg_locks where relation = 'pets'::regclass and not granted`,
        )
        return (rows[0] as { n: number }).n > 0
      },
      async release() {
        await locker.query('rollback')
        await locker.end()
      },
    }
  }
  const file = new BetterSqlite3(sqlitePath(database.url))
  file.exec(`
    create table ballast (x integer);
    insert into ballast select value from json_each('[${Array.from({ length: 3000 }, (_, i) => i).join(',')}]');
    create trigger stall_pet before insert on pets when new.name = '${name}'
    begin select count(*) from ballast a, ballast b, ballast c; end;
  `)
  return {
    reached: async () => false,
    async release() {
      file.exec('drop trigger stall_pet; drop table ballast;')
      file.close()
    },
  }
}

/** True when the server does not answer /healthz within `ms` (its event loop is busy in SQLite). */
async function stuck(base: string, ms: number): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(ms) })
    return false
  } catch {
    return true
  }
}

describeDb('Idempotency-Key after a crash (kill -9)', () => {
  let database: TestDatabase
  let apiKey: string
  let server: ServerProcess | undefined

  beforeAll(async () => {
    database = await createTestDatabase()
    const { account } = await findOrCreateAccount(database.db, 'crash@example.com')
    apiKey = (await createApiKey(database.db, { accountId: account.id })).apiKey
  })
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await server?.exited
    await database.destroy()
  })

  const start = () => startServerProcess(PET_SERVICE_BIN, { DATABASE_URL: database.url, RATE_LIMIT_RPS: '0' })
  const create = (base: string) =>
    fetch(`${base}/v1/pet`, {
      method: 'POST',
      headers: {
        authorization: basic(apiKey),
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': 'crash-key-1',
      },
      body: 'name=Stalled&species=dog',
    })

  it('lets a retry with the same key succeed at once after the server was killed mid-request, creating once', async () => {
    const stall = await stallPetInserts(database, 'Stalled')
    server = await start()
    const base = `http://127.0.0.1:${server.port}`
    const first = create(base).catch((error: unknown) => error)
    const deadline = Date.now() + 20_000
    while (!(await stall.reached()) && !(await stuck(base, 1000))) {
      if (Date.now() > deadline) throw new Error('the request never reached the pets table')
      await new Promise((r) => setTimeout(r, 50))
    }
    if (DIALECT === 'postgres') {
      // While the first request really runs, a retry waits a bounded time, then answers 409.
      const waitedFrom = Date.now()
      const meanwhile = await create(base)
      expect(meanwhile.status).toBe(409)
      expect(((await meanwhile.json()) as { code: string }).code).toBe('idempotency_request_in_progress')
      expect(meanwhile.headers.get('retry-after')).toBe('1')
      expect(Date.now() - waitedFrom).toBeLessThan(10_000)
    }
    server.child.kill('SIGKILL')
    await server.exited
    expect(await first).toBeInstanceOf(Error) // no answer: the process died
    await stall.release()

    server = await start()
    const startedAt = Date.now()
    const retry = await create(`http://127.0.0.1:${server.port}`)
    const body = await retry.text()
    expect(retry.status, body).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(Date.now() - startedAt).toBeLessThan(5_000)
    const again = await create(`http://127.0.0.1:${server.port}`)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const pets = await database.db.selectFrom('pets').select('id').where('name', '=', 'Stalled').execute()
    expect(pets).toHaveLength(1)
  }, 60_000)
})
