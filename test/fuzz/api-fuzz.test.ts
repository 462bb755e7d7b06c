import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'
import { announce, FUZZ_SEED, fuzzTimeoutMs, requestsFor } from './fuzz-config.ts'
import {
  type Answer,
  assertApiAnswer,
  assertBatchChangesNothing,
  type FuzzRequest,
  reportFailure,
  send,
} from './invariants.ts'
import {
  documentOperations,
  type FuzzContext,
  type Mode,
  type OpenApiDocument,
  operationRequest,
} from './openapi-requests.ts'

const BATCH = 200
const TOTAL = requestsFor('api')

describeDb('fuzzing every operation of /openapi.json', () => {
  let t: TestApp
  let doc: OpenApiDocument
  let ctx: FuzzContext

  beforeAll(async () => {
    announce('api-fuzz', TOTAL)
    t = await createTestApp()
    const client = await newClient(t)
    const token = await accessToken(
      t.app,
      client,
      'read:pets write:pets read:users write:users read:orders write:orders',
    )
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument
    ctx = { apiKey: client.apiKey, token, petIds: [], userIds: [], userSeqs: [], usernames: [], orderIds: [] }
    // Records to aim at: a valid id is what gets a request past the 404s.
    for (let i = 0; i < 10; i++) {
      const user = await t.app.inject({
        method: 'POST',
        url: '/v2/user',
        headers: bearer(token),
        payload: { username: `fuzz${i}` },
      })
      ctx.userSeqs.push(user.json().id as number)
      ctx.usernames.push(`fuzz${i}`)
      const pet = await t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(token),
        payload: { name: `fuzz${i}`, photoUrls: [], tags: [{ name: 'fuzz' }] },
      })
      ctx.petIds.push(pet.json().id as number)
      const order = await t.app.inject({
        method: 'POST',
        url: '/v2/store/order',
        headers: bearer(token),
        payload: { petId: pet.json().id },
      })
      ctx.orderIds.push(order.json().id as number)
    }
    ctx.userIds = (await t.database.db.selectFrom('users').select('id').execute()).map((u) => u.id)
  })
  afterAll(async () => {
    const lines = [...tally].sort().map(([op, counts]) => `  ${op}: ${JSON.stringify(counts)}`)
    console.log(`[fuzz] answers by operation [${DIALECT}]:\n${lines.join('\n')}`)
    await t.close()
  })

  function batches(mode: Mode): fc.Arbitrary<FuzzRequest[]> {
    const operations = documentOperations(doc)
    const request = fc.oneof(...operations.map((entry) => operationRequest(entry, doc, ctx, mode)))
    return fc.array(request, { minLength: BATCH, maxLength: BATCH })
  }

  /** Answers by status class, per operation: printed at the end, to see what the fuzzer reached. */
  const tally = new Map<string, Record<string, number>>()

  async function sendOne(request: FuzzRequest): Promise<Answer> {
    const answer = await send(t.app, request)
    assertApiAnswer(request, answer)
    const key = request.operation ?? request.url
    const counts = tally.get(key) ?? {}
    const bucket = `${Math.floor(answer.statusCode / 100)}xx`
    counts[bucket] = (counts[bucket] ?? 0) + 1
    tally.set(key, counts)
    return answer
  }

  async function expectAlive(): Promise<void> {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(health.statusCode, 'the server stays alive').toBe(200)
  }

  async function sendBatch(batch: FuzzRequest[]): Promise<void> {
    for (const request of batch) await sendOne(request)
    await expectAlive()
  }

  it('covers every operation of the document', () => {
    const operations = documentOperations(doc)
    expect(operations.length).toBeGreaterThanOrEqual(25)
    expect(operations.map((o) => `${o.method} ${o.path}`)).toContain('POST /v2/pet/{petId}/uploadImage')
  })

  it(
    'changes no table with batches of invalid requests, answers each with a 4xx problem',
    async () => {
      await fc.assert(
        fc.asyncProperty(batches('invalid'), async (batch) => {
          await assertBatchChangesNothing(t.database.db, DIALECT, batch, sendOne)
          await expectAlive()
        }),
        {
          seed: FUZZ_SEED,
          numRuns: Math.ceil(TOTAL / 2 / BATCH),
          endOnFailure: true,
          asyncReporter: reportFailure,
        },
      )
    },
    fuzzTimeoutMs(TOTAL / 2),
  )

  it(
    'never answers 5xx to hostile and valid requests mixed, and every 4xx is a problem document',
    async () => {
      await fc.assert(fc.asyncProperty(batches('any'), sendBatch), {
        seed: FUZZ_SEED + 1,
        numRuns: Math.ceil(TOTAL / 2 / BATCH),
        endOnFailure: true,
        asyncReporter: reportFailure,
      })
    },
    fuzzTimeoutMs(TOTAL / 2),
  )
})
