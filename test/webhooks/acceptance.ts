import { expect } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { basic } from '../helpers/app.ts'
import type { TestDatabase } from '../helpers/database.ts'
import { pollUntil } from '../helpers/poll.ts'
import type { startReceiver } from './receiver.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The environment of a server that delivers to a loopback receiver, quickly. */
export const WEBHOOK_SERVER_ENV = {
  RATE_LIMIT_RPS: '0',
  WEBHOOKS_ALLOW_INSECURE: 'true',
  WEBHOOKS_TIMEOUT_SECONDS: '2',
}

/** An account with an API key, and an endpoint subscribed to every event on the receiver. */
export async function accountWithEndpoint(
  database: TestDatabase,
  base: string,
  receiverUrl: string,
): Promise<{ apiKey: string; accountId: string }> {
  const { account } = await findOrCreateAccount(database.db, `hooks-${Date.now()}@example.com`)
  const { apiKey } = await createApiKey(database.db, { accountId: account.id })
  const res = await fetch(`${base}/v1/webhook_endpoint`, {
    method: 'POST',
    headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiverUrl, enabled_events: ['*'] }),
  })
  expect(res.status).toBe(201)
  return { apiKey, accountId: account.id }
}

/**
 * `changes` writes through the API by `clients` concurrent clients, each creating a pet then
 * updating it (`perPet - 1` times) before the next, against whichever base `target()` names at
 * the moment (undefined while no server is up). A request with no answer is sent again (creates
 * under the same Idempotency-Key); a retried update may apply twice, which is one more event.
 */
export async function makeChanges(options: {
  apiKey: string
  target: (n: number) => string | undefined
  changes: number
  clients: number
  perPet: number
  onAcknowledged?: () => void
}): Promise<void> {
  const { apiKey, perPet } = options
  let next = 0
  async function send(
    n: number,
    path: string,
    method: string,
    body: string,
    key?: string,
  ): Promise<{ id: number }> {
    for (;;) {
      const base = options.target(n)
      if (base === undefined) {
        await sleep(20)
        continue
      }
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: basic(apiKey),
            'content-type': 'application/x-www-form-urlencoded',
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          body,
          signal: AbortSignal.timeout(15_000),
        })
        const text = await res.text()
        if (res.status >= 500) {
          await sleep(20)
          continue
        }
        expect(res.status, text).toBeLessThan(300)
        options.onAcknowledged?.()
        return JSON.parse(text) as { id: number }
      } catch (error) {
        if ((error as Error).name === 'AssertionError') throw error
        await sleep(20)
      }
    }
  }
  async function client(n: number): Promise<void> {
    for (;;) {
      const start = next
      if (start >= options.changes) return
      next += perPet
      const pet = await send(n, '/v1/pet', 'POST', `name=p${start}`, `create-${start}`)
      for (let i = 1; i < perPet && start + i < options.changes; i++) {
        await send(n, `/v1/pet/${pet.id}`, 'PATCH', `name=p${start}-${i}`)
      }
    }
  }
  await Promise.all(Array.from({ length: options.clients }, (_, n) => client(n)))
}

/**
 * Waits until the receiver has every event of the account, then checks: each event arrived (no
 * event missing, none unknown), and per object the first arrivals follow the events' order.
 */
export async function expectEveryEventOnceInOrder(
  database: TestDatabase,
  accountId: string,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  timeoutMs: number,
): Promise<{ events: number; received: number }> {
  const events = await database.db
    .selectFrom('events')
    .select(['id', 'seq', 'object_id'])
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute()
  await waitForEvery(
    events.map((e) => e.id),
    receiver,
    timeoutMs,
  )
  // Nothing but the account's events.
  const wanted = new Set(events.map((e) => e.id))
  expect([...receiver.ids].filter((id) => !wanted.has(id))).toEqual([])
  // Per object, first arrivals in seq order.
  const seqOf = new Map(events.map((e) => [e.id, e.seq]))
  const lastSeq = new Map<string, number>()
  const firstSeen = new Set<string>()
  const outOfOrder: string[] = []
  for (const r of receiver.received) {
    const id = String(r.headers['webhook-id'])
    if (firstSeen.has(id)) continue
    firstSeen.add(id)
    const object = (JSON.parse(r.body) as { data: { object: { id: number | string } } }).data.object.id
    const seq = seqOf.get(id)!
    if ((lastSeq.get(String(object)) ?? -1) > seq) outOfOrder.push(`${id} of ${object}`)
    lastSeq.set(String(object), seq)
  }
  expect(outOfOrder).toEqual([])
  return { events: events.length, received: receiver.received.length }
}

/**
 * Waits until the receiver has had a request for each of `wanted` (webhook-ids), or throws
 * naming the missing ones at `timeoutMs`. The receiver runs in this process: each look costs
 * O(events still missing), so the loop stays free to answer deliveries while it waits (a look
 * that rebuilt the set of arrivals per wanted id blocked it for seconds, long enough for the
 * sender's timeout to fail deliveries the receiver had in hand).
 */
export async function waitForEvery(
  wanted: readonly string[],
  receiver: Pick<Awaited<ReturnType<typeof startReceiver>>, 'ids'>,
  timeoutMs: number,
): Promise<void> {
  let missing = [...wanted]
  const arrived = () => {
    missing = missing.filter((id) => !receiver.ids.has(id))
    return missing.length === 0
  }
  if ((await pollUntil(arrived, timeoutMs)) !== undefined) return
  throw new Error(
    `${missing.length} of ${wanted.length} events never arrived, e.g. ${missing.slice(0, 3).join(', ')}`,
  )
}
