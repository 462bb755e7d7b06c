import { beforeAll, expect, it } from 'vitest'
import { EventsRetention } from '../../src/events/events-retention.ts'
import { recordEvent } from '../../src/events/events-service.ts'
import { useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'

const DAY = 24 * 60 * 60 * 1000
const NOW = Date.parse('2026-12-31T12:00:00.000Z')

describeDb('events retention', () => {
  let a: { accountId: string; apiKey: string }
  let b: { accountId: string; apiKey: string }

  const t = useTestApp()
  beforeAll(async () => {
    a = await t.newAccount()
    b = await t.newAccount()
    // Oldest first, as they would have been written: 40, 35 and 31 days old, then 29 and 1.
    for (const [age, account] of [
      [40, a],
      [35, b],
      [31, a],
      [30.5, b],
      [29, a],
      [1, b],
    ] as const) {
      await recordEvent(t.database.db, {
        accountId: account.accountId,
        type: 'user.created',
        objectId: `usr_${age}`,
        object: { id: `usr_${age}`, object: 'user', name: `${age} days old` },
        at: new Date(NOW - age * DAY).toISOString(),
      })
    }
  })

  const remaining = async (account: { apiKey: string }) =>
    (await withKey(t.app, account.apiKey)({ method: 'GET', url: '/v1/event?limit=100' }))
      .json()
      .data.map((e: { data: { object: { name: string } } }) => e.data.object.name)

  const retention = (options: { batch: number; maxBatchesPerRun: number }) =>
    new EventsRetention(t.database.db, {
      days: 30,
      intervalMs: 60_000,
      onError: (error) => {
        throw error
      },
      now: () => NOW,
      ...options,
    })

  it('deletes events past the retention period in bounded batches, a bounded number per run', async () => {
    // One batch of two per run: the run stops there, and the next goes on.
    expect(await retention({ batch: 2, maxBatchesPerRun: 1 }).purge()).toBe(2)
    expect(await remaining(a)).toEqual(['29 days old', '31 days old'])
    expect(await remaining(b)).toEqual(['1 days old', '30.5 days old'])
    expect(await retention({ batch: 1, maxBatchesPerRun: 10 }).purge()).toBe(2)
    expect(await remaining(a)).toEqual(['29 days old'])
    expect(await remaining(b)).toEqual(['1 days old'])
  })

  it('keeps everything younger than the period, however many runs', async () => {
    expect(await retention({ batch: 1000, maxBatchesPerRun: 100 }).purge()).toBe(0)
    expect(await remaining(a)).toEqual(['29 days old'])
    expect(await remaining(b)).toEqual(['1 days old'])
  })

  it('runs in the background once started, and stops', async () => {
    await recordEvent(t.database.db, {
      accountId: a.accountId,
      type: 'user.deleted',
      objectId: 'usr_old',
      object: { id: 'usr_old', object: 'user', name: 'background' },
      at: new Date(NOW).toISOString(),
    })
    expect(await remaining(a)).toEqual(['background', '29 days old'])
    const background = new EventsRetention(t.database.db, {
      days: 30,
      batch: 10,
      maxBatchesPerRun: 1,
      intervalMs: 5,
      onError: () => {},
      // 31 days later: everything written so far is past the period.
      now: () => NOW + 31 * DAY,
    })
    background.start()
    try {
      await waitUntil(
        'the retention run has happened',
        async () => (await remaining(a)).length === 0,
        15_000,
        1,
      )
    } finally {
      await background.stop()
    }
    expect(await remaining(b)).toEqual([])
  })
})
