import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  claimCandidates,
  claimDue,
  endpointsWithOpenDeliveries,
  endpointsWithOpenDeliveriesQuery,
  insertDeliveries,
  type NewDelivery,
  useClaimPlan,
} from '../../src/webhooks/webhooks-repository.ts'
import { createTestApp, type TestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'

const DONE = 3_000
const OPEN = 20_000
const LIMIT = 29
// Due an hour ago; claimed as of an hour from now (enabling an endpoint makes its deliveries due
// at the service's clock: now).
const HOUR = 3_600_000
const AT = new Date(Date.now() - HOUR).toISOString()
const NOW = new Date(Date.now() + HOUR).toISOString()
const LOCKED_UNTIL = new Date(Date.now() + 2 * HOUR).toISOString()
const claimOf = (endpointId: string) => ({ endpointId, now: NOW, lockedUntil: LOCKED_UNTIL, limit: LIMIT })

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  Alias?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Relation Name'?: string
  Plans?: PlanNode[]
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)]
}

// A queue table's statistics lag behind it: analysed while its deliveries were done, it has
// since filled with a burst of open ones. The claim must read what it takes, not the backlog.
describeDb('the webhooks worker claims from a backlog by reading only what it takes', () => {
  let t: TestApp
  let call: ReturnType<typeof withKey>
  let accountId: string

  async function newEndpoint(): Promise<string> {
    const answer = await call({
      method: 'POST',
      url: '/v1/webhook_endpoint',
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
      headers: { 'content-type': 'application/json' },
    })
    expect(answer.statusCode).toBe(201)
    return (answer.json() as { id: string }).id
  }

  async function setStatus(endpointId: string, status: 'enabled' | 'disabled') {
    const answer = await call({
      method: 'PATCH',
      url: `/v1/webhook_endpoint/${endpointId}`,
      payload: JSON.stringify({ status }),
      headers: { 'content-type': 'application/json' },
    })
    expect(answer.statusCode).toBe(200)
  }

  function delivery(endpointId: string, n: number, status: 'succeeded' | 'pending'): NewDelivery {
    return {
      id: `dlv_${endpointId}_${n}`,
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
    }
  }

  /** What the claim's plan for one endpoint reads of the deliveries table (PostgreSQL), and how. */
  async function deliveriesScan(endpointId: string): Promise<PlanNode | undefined> {
    const compiled = claimCandidates(t.database.db, claimOf(endpointId)).compile()
    const plan = await t.database.db.transaction().execute(async (trx) => {
      await useClaimPlan(trx)
      const result = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
      )
      return result.rows[0]!['QUERY PLAN'][0].Plan
    })
    expect(nodes(plan).map((n) => n['Node Type'])).not.toContain('Sort')
    return nodes(plan).find((n) => n.Alias === 'd')
  }

  const claim = (endpointId: string) =>
    t.database.db.transaction().execute((trx) => claimDue(trx, claimOf(endpointId)))

  /** The rows the look for endpoints with due deliveries reads of the deliveries table (PostgreSQL). */
  async function rowsReadFindingEndpoints(): Promise<number> {
    const compiled = endpointsWithOpenDeliveriesQuery({ after: '', limit: 1000 }).compile(t.database.db)
    const result = await t.database.db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
    )
    return nodes(result.rows[0]!['QUERY PLAN'][0].Plan)
      .filter((n) => n['Relation Name'] === 'webhook_deliveries')
      .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1), 0)
  }

  let backlogEndpoint: string

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' })
    const { apiKey } = await t.newAccount()
    call = withKey(t.app, apiKey)
    backlogEndpoint = await newEndpoint()
    accountId = (
      await t.database.db
        .selectFrom('webhook_endpoints')
        .select('account_id')
        .where('id', '=', backlogEndpoint)
        .executeTakeFirstOrThrow()
    ).account_id
    const db = t.database.db
    await insertDeliveries(
      db,
      Array.from({ length: DONE }, (_, i) => delivery(backlogEndpoint, i + 1, 'succeeded')),
    )
    await sql`analyze`.execute(db)
    await insertDeliveries(
      db,
      Array.from({ length: OPEN }, (_, i) => delivery(backlogEndpoint, DONE + i + 1, 'pending')),
    )
  }, 60_000)
  afterAll(async () => t.close())

  it("walks the endpoint's due index in order and stops at the limit: no sort of the backlog", async () => {
    if (DIALECT === 'postgres') {
      const scan = await deliveriesScan(backlogEndpoint)
      expect(scan?.['Index Name']).toBe('webhook_deliveries_endpoint_due')
      expect(scan?.['Actual Rows']).toBe(LIMIT)
    } else {
      const compiled = claimCandidates(t.database.db, claimOf(backlogEndpoint)).compile()
      const result = await t.database.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      )
      const details = result.rows.map((r) => r.detail)
      expect(details.some((d) => d.includes('webhook_deliveries_endpoint_due'))).toBe(true)
      expect(details.filter((d) => d.includes('TEMP B-TREE'))).toEqual([])
    }
  })

  it('finds the endpoints with due deliveries by reading a few index entries each, however long their backlog', async () => {
    const found = await endpointsWithOpenDeliveries(t.database.db, { after: '', limit: 1000 })
    expect(found).toEqual([{ endpointId: backlogEndpoint, accountId, dueAt: AT }])
    if (DIALECT === 'postgres') expect(await rowsReadFindingEndpoints()).toBeLessThanOrEqual(3)
    else {
      const compiled = endpointsWithOpenDeliveriesQuery({ after: '', limit: 1000 }).compile(t.database.db)
      const result = await t.database.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      )
      // Every read of the deliveries is a search by endpoint in the due index, none a scan.
      const reads = result.rows.map((r) => r.detail).filter((d) => /webhook_deliveries|\bd\b/.test(d))
      expect(reads.length).toBeGreaterThan(0)
      for (const read of reads) expect(read).toMatch(/^SEARCH .* USING INDEX webhook_deliveries_endpoint_due/)
    }
  })

  it('claims the oldest due deliveries, in order', async () => {
    const claimed = await claim(backlogEndpoint)
    expect(claimed.map((d) => d.event_seq)).toEqual(Array.from({ length: LIMIT }, (_, i) => DONE + i + 1))
    expect(claimed.every((d) => d.locked_until === LOCKED_UNTIL)).toBe(true)
  })

  it("holds a disabled endpoint's backlog out of the claim's way, and makes it due again once enabled", async () => {
    await setStatus(backlogEndpoint, 'disabled')
    const other = await newEndpoint()
    await insertDeliveries(
      t.database.db,
      [1, 2, 3].map((n) => delivery(other, DONE + OPEN + n, 'pending')),
    )
    // Only the other endpoint's three deliveries are read: none of the 20,000 held ones.
    if (DIALECT === 'postgres') {
      expect((await deliveriesScan(other))?.['Actual Rows']).toBe(3)
      expect(await rowsReadFindingEndpoints()).toBeLessThanOrEqual(5)
    }
    expect(
      (await endpointsWithOpenDeliveries(t.database.db, { after: '', limit: 1000 })).filter(
        (e) => e.dueAt !== null,
      ),
    ).toEqual([{ endpointId: other, accountId, dueAt: AT }])
    const held = await t.database.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('endpoint_id', '=', backlogEndpoint)
      .where('status', '=', 'pending')
      .where('next_attempt_at', 'is', null)
      .executeTakeFirstOrThrow()
    expect(Number(held.n)).toBe(OPEN)
    expect((await claim(other)).map((d) => d.endpoint_id)).toEqual([other, other, other])

    await setStatus(backlogEndpoint, 'enabled')
    // Due again, in their order; the 29 claimed before stay with their claim until it lapses.
    expect((await claim(backlogEndpoint)).map((d) => d.event_seq)).toEqual(
      Array.from({ length: LIMIT }, (_, i) => DONE + LIMIT + i + 1),
    )
  })
})
