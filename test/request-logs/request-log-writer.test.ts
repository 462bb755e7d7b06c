import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { capped, type NewRequestLog } from '../../src/request-logs/request-log.ts'
import { registerRequestLogMetrics } from '../../src/request-logs/request-log-metrics.ts'
import { RequestLogWriter } from '../../src/request-logs/request-log-writer.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'

describeDb('request log writer', () => {
  let t: TestApp
  let accountId: string

  beforeAll(async () => {
    t = await createTestApp()
    accountId = (await t.newAccount()).accountId
  })
  afterAll(() => t.close())

  let n = 0
  const entry = (): NewRequestLog => ({
    id: `rlog_writer${++n}`,
    account_id: accountId,
    created_at: new Date().toISOString(),
    method: 'GET',
    path: '/v1/pet',
    status: 200,
    error_code: null,
    duration_ms: 1,
    request_id: `req_writer${n}`,
    credential_kind: 'api_key',
    credential_id: 'key_writer',
    client_address: '127.0.0.1',
    api_version: 'v1',
    request_headers: null,
    request_body: null,
    response_body: null,
  })
  const stored = async () =>
    Number(
      (
        await t.database.db
          .selectFrom('request_log')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('credential_id', '=', 'key_writer')
          .executeTakeFirstOrThrow()
      ).n,
    )

  /** Holds the database's lock on the table from another connection until the answer is called. */
  async function holdWriteLock(): Promise<() => Promise<void>> {
    if (DIALECT === 'sqlite') {
      const other = new BetterSqlite3(t.database.location.replace(/^sqlite:/, ''))
      other.exec('begin immediate')
      return async () => {
        other.exec('rollback')
        other.close()
      }
    }
    const other = t.database.reopen()
    let release!: () => void
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const held = other.db.transaction().execute(async (trx) => {
      await sql`lock table request_log in exclusive mode`.execute(trx)
      locked()
      await new Promise<void>((resolve) => {
        release = resolve
      })
    })
    await isLocked
    return async () => {
      release()
      await held
      await other.close()
    }
  }

  it('drops and counts the entries past its capacity while the database holds it up, never waiting', async () => {
    const writer = new RequestLogWriter(t.database.db, {
      batch: 5,
      capacity: 10,
      intervalMs: 60_000,
      onError: () => {},
    })
    const registry = new Registry()
    registerRequestLogMetrics(registry, writer)
    const release = await holdWriteLock()
    try {
      // The fifth entry starts an insert, which waits for the lock; the buffer then takes ten more.
      for (let i = 0; i < 40; i++) writer.record(entry())
      expect(writer.buffered).toBe(10)
      expect(writer.dropped).toBeGreaterThanOrEqual(25)
      const metrics = await registry.metrics()
      expect(metrics).toMatch(new RegExp(`^request_logs_dropped_total ${writer.dropped}$`, 'm'))
      expect(metrics).toMatch(/^request_logs_buffered 10$/m)
    } finally {
      await release()
    }
    await writer.close()
    expect(writer.written + writer.dropped).toBe(40)
    expect(writer.written).toBeGreaterThanOrEqual(10)
    expect(await stored()).toBe(writer.written)
  })

  it('writes buffered entries in the background, and the rest when closed', async () => {
    const before = await stored()
    const writer = new RequestLogWriter(t.database.db, {
      batch: 100,
      capacity: 1000,
      intervalMs: 50,
      onError: () => {},
    })
    writer.start()
    for (let i = 0; i < 3; i++) writer.record(entry())
    await waitUntil('the interval writes them', async () => (await stored()) === before + 3)
    for (let i = 0; i < 4; i++) writer.record(entry())
    await writer.close()
    expect(await stored()).toBe(before + 7)
    // Closed: nothing more is taken.
    writer.record(entry())
    expect(writer.buffered).toBe(0)
  })

  it('stores a batch whose entries hold a lone surrogate or a body cut inside an emoji, with its other entries', async () => {
    const before = await stored()
    const writer = new RequestLogWriter(t.database.db, {
      batch: 100,
      capacity: 1000,
      intervalMs: 60_000,
      onError: () => {},
    })
    const lone = { ...entry(), status: 400, response_body: 'bad \ud800 value' }
    // The cap falls between the two halves of the emoji.
    const cut = { ...entry(), status: 400, request_body: capped(`${'x'.repeat(99)}🐶 and more`, 100) }
    writer.record(lone)
    writer.record(cut)
    writer.record(entry())
    await writer.close()
    expect(writer.dropped).toBe(0)
    expect(await stored()).toBe(before + 3)
    const rows = await t.database.db
      .selectFrom('request_log')
      .select(['id', 'request_body', 'response_body'])
      .where('id', 'in', [lone.id, cut.id])
      .execute()
    const byId = new Map(rows.map((row) => [row.id, row]))
    expect(byId.get(lone.id)?.response_body).toBe('bad \ufffd value')
    expect(byId.get(cut.id)?.request_body).toBe(`${'x'.repeat(99)}…[cut at 100 characters]`)
  })

  it('stores a batch of every size whole, through statements of fixed row counts', async () => {
    const before = await stored()
    const writer = new RequestLogWriter(t.database.db, {
      batch: 200,
      capacity: 1000,
      intervalMs: 60_000,
      onError: () => {},
    })
    // 64 + 16 + 4 + 1 on SQLite: each statement size once.
    for (let i = 0; i < 85; i++) writer.record(entry())
    await writer.close()
    expect(writer.dropped).toBe(0)
    expect(await stored()).toBe(before + 85)
  })
})
