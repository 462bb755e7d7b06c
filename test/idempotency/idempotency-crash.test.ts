import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { sqlitePath } from '../../src/config/config.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'

/**
 * Makes every `INSERT INTO pets` of a pet named `name` wait until release() is called: a trigger
 * added by the test, which on PostgreSQL sleeps until a row tells it to go on (a sleep, not a
 * lock: the statement has by then claimed its key, and no lock timeout ends the wait), and on
 * SQLite runs a very long query. Neither touches the service's code.
 */
async function stallPetInserts(database: TestDatabase, name: string) {
  if (DIALECT === 'postgres') {
    const control = new pg.Client({ connectionString: POSTGRES_URL })
    await control.connect()
    await control.query(`set search_path = ${database.schema}`)
    await control.query(`
      create table stall_release (go boolean);
      create function stall_pet() returns trigger language plpgsql as $$
      begin
        while not exists (select 1 from stall_release) loop perform pg_sleep(0.02); end loop;
        return new;
      end $$;
      create trigger stall_pet before insert on pets
        for each row when (new.name = '${name}') execute function stall_pet();
    `)
    const stalled = async () => {
      const { rows } = await control.query(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event = 'PgSleep'`,
      )
      return (rows[0] as { n: number }).n
    }
    return {
      /** True once a server connection sleeps in the trigger. */
      reached: async () => (await stalled()) > 0,
      /** Lets the stalled statements go on, and waits until they have. */
      async release() {
        await control.query('insert into stall_release values (true)')
        await waitUntil(
          'the stalled statements have gone on',
          async () => (await stalled()) === 0,
          15_000,
          20,
        )
        await control.query(
          'drop trigger stall_pet on pets; drop function stall_pet(); drop table stall_release',
        )
        await control.end()
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

  // A statement limit well past the test's own waits: the stalled create must still be running
  // when the process is killed, however slow the machine.
  const start = () =>
    startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      RATE_LIMIT_RPS: '0',
      DB_STATEMENT_TIMEOUT_SECONDS: '60',
    })
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

  it('lets a retry with the same key answer at once after the server was killed mid-request, creating once', async () => {
    const stall = await stallPetInserts(database, 'Stalled')
    server = await start()
    const base = `http://127.0.0.1:${server.port}`
    const first = create(base).catch((error: unknown) => error)
    await waitUntil(
      'the request reaches the pets table',
      async () => (await stall.reached()) || (await stuck(base, 1000)),
      20_000,
      50,
    )
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
    if (DIALECT === 'postgres') {
      // The killed process had sent its one statement (the key's claim, the pet, the event and
      // the response): PostgreSQL finished and committed it, so the retry replays its answer.
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
    } else {
      // SQLite's transaction died with the process: the retry runs afresh.
      expect(retry.headers.get('idempotent-replayed')).toBeNull()
    }
    expect(Date.now() - startedAt).toBeLessThan(5_000)
    const again = await create(`http://127.0.0.1:${server.port}`)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await again.json()).toEqual(JSON.parse(body))
    const pets = await database.db.selectFrom('pets').select('id').where('name', '=', 'Stalled').execute()
    expect(pets).toHaveLength(1)
  }, 60_000)
})
