import { afterAll, beforeAll, expect, it } from 'vitest'
import { EventsRetention } from '../../src/events/events-retention.ts'
import {
  insertAttempt,
  insertDeliveries,
  type NewDelivery,
  purgeFinishedDeliveriesBefore,
} from '../../src/webhooks/webhooks-repository.ts'
import { createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

const DAY = 24 * 60 * 60 * 1000
const NOW = Date.parse('2026-12-31T12:00:00.000Z')

describeDb('the webhook delivery log is kept as long as the events', () => {
  let t: TestApp
  let call: ReturnType<typeof withKey>
  let endpointId: string

  /** A delivery of the given age and status, with one attempt in the log unless it is pending. */
  async function delivery(name: string, ageDays: number, status: NewDelivery['status']) {
    const at = new Date(NOW - ageDays * DAY).toISOString()
    const { account_id: accountId } = await t.database.db
      .selectFrom('webhook_endpoints')
      .select('account_id')
      .where('id', '=', endpointId)
      .executeTakeFirstOrThrow()
    await insertDeliveries(t.database.db, [
      {
        id: `dlv_${name}`,
        endpoint_id: endpointId,
        account_id: accountId,
        event_id: `evt_${name}`,
        event_seq: 1,
        event_type: 'pet.created',
        object_id: name,
        payload: '{}',
        dedupe_key: null,
        status,
        attempts: status === 'pending' ? 0 : 1,
        // A disabled endpoint's open deliveries wait with no due time.
        next_attempt_at: null,
        locked_until: null,
        created_at: at,
        updated_at: at,
      },
    ])
    if (status === 'pending') return
    await insertAttempt(t.database.db, {
      id: `wd_${name}`,
      delivery_id: `dlv_${name}`,
      endpoint_id: endpointId,
      account_id: accountId,
      event_id: `evt_${name}`,
      event_type: 'pet.created',
      attempt: 1,
      status,
      attempted_at: at,
      response_status: status === 'succeeded' ? 200 : 500,
      latency_ms: 3,
      response_body_excerpt: '',
      error: null,
      next_attempt_at: null,
    })
  }

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })
    const { apiKey } = await t.newAccount()
    call = withKey(t.app, apiKey)
    const created = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
      headers: { 'content-type': 'application/json' },
    })
    endpointId = (created.json() as { id: string }).id
    // Oldest first, as they would have been written.
    await delivery('delivered_40_days_ago', 40, 'succeeded')
    await delivery('held_35_days', 35, 'pending')
    await delivery('failed_31_days_ago', 31, 'failed')
    await delivery('delivered_yesterday', 1, 'succeeded')
  })
  afterAll(async () => t.close())

  it('deletes finished deliveries past the retention period with their attempts, and keeps open ones', async () => {
    const retention = new EventsRetention(t.database.db, {
      days: 30,
      batch: 1,
      maxBatchesPerRun: 10,
      intervalMs: 60_000,
      onError: (error) => {
        throw error
      },
      now: () => NOW,
      alongside: [purgeFinishedDeliveriesBefore],
    })
    expect(await retention.purge()).toBe(2)
    const deliveries = await t.database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .orderBy('seq')
      .execute()
    expect(deliveries.map((d) => d.id)).toEqual(['dlv_held_35_days', 'dlv_delivered_yesterday'])
    const log = await call({ method: 'GET', url: `/v1/webhook_endpoint/${endpointId}/delivery` })
    expect(log.json().data.map((a: { event_id: string }) => a.event_id)).toEqual(['evt_delivered_yesterday'])
    // Nothing more to delete.
    expect(await retention.purge()).toBe(0)
  })
})
