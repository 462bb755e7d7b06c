import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  claimCandidates,
  claimDue,
  insertDeliveries,
  type NewDelivery,
  useClaimPlan,
} from '../../src/webhooks/webhooks-repository.ts'
import { createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'

const DONE = 3_000
const OPEN = 20_000
const LIMIT = 29
const AT = '2026-11-24T09:00:00.000Z'
const options = {
  now: '2026-11-24T10:00:00.000Z',
  lockedUntil: '2026-11-24T10:00:30.000Z',
  limit: LIMIT,
  excludeEndpoints: [],
}

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  Alias?: string
  'Actual Rows'?: number
  Plans?: PlanNode[]
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)]
}

// A queue table's statistics lag behind it: analysed while its deliveries were done, it has
// since filled with a burst of open ones. The claim must read what it takes, not the backlog.
describeDb('the webhooks worker claims from a backlog by reading only what it takes', () => {
  let t: TestApp
  let endpointId: string

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })
    const { apiKey } = await t.newAccount()
    const answer = await withKey(
      t.app,
      apiKey,
    )({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
      headers: { 'content-type': 'application/json' },
    })
    expect(answer.statusCode).toBe(201)
    const endpoint = answer.json() as { id: string }
    endpointId = endpoint.id
    const { account_id: accountId } = await t.database.db
      .selectFrom('webhook_endpoints')
      .select('account_id')
      .where('id', '=', endpointId)
      .executeTakeFirstOrThrow()
    const delivery = (n: number, status: 'succeeded' | 'pending'): NewDelivery => ({
      id: `dlv_plan${n}`,
      endpoint_id: endpointId,
      account_id: accountId,
      event_id: `evt_plan${n}`,
      event_seq: n,
      event_type: 'pet.created',
      object_id: String(n),
      payload: '{}',
      dedupe_key: `${endpointId}:evt_plan${n}`,
      status,
      attempts: status === 'pending' ? 0 : 1,
      next_attempt_at: status === 'pending' ? AT : null,
      locked_until: null,
      created_at: AT,
      updated_at: AT,
    })
    const db = t.database.db
    await insertDeliveries(
      db,
      Array.from({ length: DONE }, (_, i) => delivery(i + 1, 'succeeded')),
    )
    await sql`analyze`.execute(db)
    await insertDeliveries(
      db,
      Array.from({ length: OPEN }, (_, i) => delivery(DONE + i + 1, 'pending')),
    )
  }, 60_000)
  afterAll(async () => t.close())

  it('walks the due index in order and stops at the limit: no sort of the backlog', async () => {
    const compiled = claimCandidates(t.database.db, options).compile()
    if (DIALECT === 'postgres') {
      const plan = await t.database.db.transaction().execute(async (trx) => {
        await useClaimPlan(trx)
        const result = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
        )
        return result.rows[0]!['QUERY PLAN'][0].Plan
      })
      const all = nodes(plan)
      expect(all.map((n) => n['Node Type'])).not.toContain('Sort')
      const scan = all.find((n) => n.Alias === 'd')
      expect(scan?.['Index Name']).toBe('webhook_deliveries_due')
      expect(scan?.['Actual Rows']).toBe(LIMIT)
    } else {
      const result = await t.database.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      )
      const details = result.rows.map((r) => r.detail)
      expect(details.some((d) => d.includes('webhook_deliveries_due'))).toBe(true)
      expect(details.filter((d) => d.includes('TEMP B-TREE'))).toEqual([])
    }
  })

  it('claims the oldest due deliveries, in order', async () => {
    const claimed = await t.database.db.transaction().execute((trx) => claimDue(trx, options))
    expect(claimed.map((d) => d.event_seq)).toEqual(Array.from({ length: LIMIT }, (_, i) => DONE + i + 1))
    expect(claimed.every((d) => d.locked_until === options.lockedUntil)).toBe(true)
  })
})
