import { afterAll, beforeAll, expect, it } from 'vitest'
import { EventsRetention } from '../../src/events/events-retention.ts'
import { purgeRequestLogsBefore } from '../../src/request-logs/request-logs-service.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

const DAY = 24 * 60 * 60 * 1000
const NOW = Date.parse('2026-12-31T12:00:00.000Z')

describeDb('request log retention', () => {
  let t: TestApp
  let accountId: string

  beforeAll(async () => {
    t = await createTestApp()
    accountId = (await t.newAccount()).accountId
    // Oldest first, as the writer stores them: 10, 8 and 7.5 days old, then 6 and 0.
    for (const age of [10, 8, 7.5, 6, 0]) {
      await t.database.db
        .insertInto('request_log')
        .values({
          id: `rlog_${String(age).replace('.', '_')}`,
          account_id: accountId,
          created_at: new Date(NOW - age * DAY).toISOString(),
          method: 'GET',
          path: '/v1/pet',
          status: 200,
          error_code: null,
          duration_ms: 1,
          request_id: `req_${age}`,
          credential_kind: 'api_key',
          credential_id: 'key_x',
          client_address: '127.0.0.1',
          api_version: 'v1',
          request_headers: null,
          request_body: null,
          response_body: null,
        })
        .execute()
    }
  })
  afterAll(() => t.close())

  const remaining = async () =>
    (await t.database.db.selectFrom('request_log').select('id').orderBy('seq').execute()).map((r) => r.id)

  it('purges entries past REQUEST_LOG_RETENTION_DAYS in bounded batches, with the events purge', async () => {
    const retention = (batch: number, maxBatchesPerRun: number) =>
      new EventsRetention(t.database.db, {
        days: 30,
        batch,
        maxBatchesPerRun,
        intervalMs: 60_000,
        onError: (error) => {
          throw error
        },
        now: () => NOW,
        others: [{ days: 7, purgeBefore: purgeRequestLogsBefore }],
      })
    // One batch of two per run: the run stops there, and the next goes on.
    expect(await retention(2, 1).purge()).toBe(2)
    expect(await remaining()).toEqual(['rlog_7_5', 'rlog_6', 'rlog_0'])
    expect(await retention(1000, 100).purge()).toBe(1)
    expect(await remaining()).toEqual(['rlog_6', 'rlog_0'])
    expect(await retention(1000, 100).purge()).toBe(0)
  })
})
