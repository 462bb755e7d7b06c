import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic, createTestApp } from '../helpers/app.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { TcpProxy } from '../helpers/tcp-proxy.ts'
import { parsePrometheus, type Sample, sampleValue } from '../observability/prometheus-text.ts'

// Redis behaves the same whatever the database, so this runs on SQLite only.
const REDIS_URL = process.env.TEST_REDIS_URL

describeDb('rate limits while Redis goes away', () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let instances: FastifyInstance[]
  /** What each instance logged at warn and above, and its "Redis is back" lines. */
  const logs: { level: number; msg: string }[][] = [[], []]

  beforeAll(async () => {
    if (REDIS_URL === undefined) return
    database = await createTestDatabase()
    const target = new URL(REDIS_URL)
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
    const env = {
      REDIS_URL: proxy.rewrite(REDIS_URL),
      REDIS_TIMEOUT_SECONDS: '0.3',
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '3',
    }
    const logger = (i: number) => ({
      level: 'info',
      stream: { write: (line: string) => void logs[i]!.push(JSON.parse(line)) },
    })
    // Two instances sharing one Redis, as behind a load balancer.
    instances = [
      (await createTestApp(env, { database, logger: logger(0) })).app,
      (await createTestApp(env, { database, logger: logger(1) })).app,
    ]
    await waitUntil('both instances reach Redis', async () => (await sharedLimit()) <= 4)
  })
  afterEach(async () => {
    await proxy?.restore()
  })
  afterAll(async () => {
    for (const app of instances ?? []) await app.close()
    await proxy?.close()
    await database?.destroy()
  })

  const newKey = async () => {
    return (await accountWithKey(database.db)).apiKey
  }
  const list = async (app: FastifyInstance, apiKey: string) => {
    const started = Date.now()
    const res = await app.inject({ method: 'GET', url: '/v1/pet', headers: { authorization: basic(apiKey) } })
    return { status: res.statusCode, ms: Date.now() - started }
  }
  /** Requests a fresh account gets through when it sends 3 to each instance at once. */
  const sharedLimit = async () => {
    const apiKey = await newKey()
    const answers = await Promise.all(instances.flatMap((app) => [1, 2, 3].map(() => list(app, apiKey))))
    return answers.filter((a) => a.status === 200).length
  }
  const said = (instance: number, pattern: RegExp) =>
    logs[instance]!.filter((l) => pattern.test(l.msg)).length

  const skipReason = 'SKIPPED: set TEST_REDIS_URL to run'
  it.skipIf(REDIS_URL === undefined)(
    REDIS_URL === undefined
      ? skipReason
      : 'falls back to per-instance limits at once when Redis refuses connections',
    async () => {
      const before = { down: said(0, /per-instance/), up: said(0, /shared .* again/) }
      await proxy.refuse()
      const apiKey = await newKey()
      const answers = []
      for (let i = 0; i < 8; i++) answers.push(await list(instances[0]!, apiKey))
      // The burst of 3 is still enforced, by the instance alone; no answer waits on Redis.
      expect(answers.map((a) => a.status).slice(0, 3)).toEqual([200, 200, 200])
      expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(4)
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true)
      for (const answer of answers) expect(answer.ms).toBeLessThan(1500)
      // The instance says it once, however many requests it limits alone.
      expect(said(0, /per-instance/) - before.down).toBe(1)
      expect(logs[0]!.find((l) => /per-instance/.test(l.msg))?.level).toBe(40)

      await proxy.restore()
      await waitUntil('the instances share one limit again', async () => (await sharedLimit()) <= 4)
      expect(said(0, /shared .* again/) - before.up).toBe(1)
      expect(said(0, /per-instance/) - before.down).toBe(1)
    },
  )

  it.skipIf(REDIS_URL === undefined)(
    REDIS_URL === undefined
      ? skipReason
      : 'answers within its Redis timeout while Redis stalls, then shares limits again',
    async () => {
      await waitUntil('the instances share one limit', async () => (await sharedLimit()) <= 4)
      proxy.blackhole()
      const apiKey = await newKey()
      const answers = await Promise.all(
        instances.flatMap((app) => [1, 2, 3, 4, 5].map(() => list(app, apiKey))),
      )
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true)
      // REDIS_TIMEOUT_SECONDS=0.3: a generous bound above it.
      for (const answer of answers) expect(answer.ms).toBeLessThan(2000)
      // Per instance now: each lets its own burst of 3 through.
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(6)

      await proxy.restore()
      await waitUntil('the instances share one limit again', async () => (await sharedLimit()) <= 4)
    },
  )

  it.skipIf(REDIS_URL === undefined)(
    REDIS_URL === undefined
      ? skipReason
      : 'counts on /metrics the outage and every limit decided without Redis, and says when it answers again',
    async () => {
      const metrics = async () => parsePrometheus(await instances[0]!.metrics!.metrics())
      await waitUntil('Redis answers', async () => sampleValue(await metrics(), 'redis_answering') === 1)
      const before = await metrics()
      const moved = (after: Sample[], name: string) => sampleValue(after, name) - sampleValue(before, name)
      await proxy.refuse()
      const apiKey = await newKey()
      for (let i = 0; i < 5; i++) await list(instances[0]!, apiKey)
      const during = await metrics()
      expect(sampleValue(during, 'redis_answering')).toBe(0)
      expect(moved(during, 'redis_outages_total')).toBe(1)
      expect(moved(during, 'rate_limit_redis_fallbacks_total')).toBe(5)
      await proxy.restore()
      await waitUntil(
        'Redis answers again',
        async () => sampleValue(await metrics(), 'redis_answering') === 1,
      )
      expect(moved(await metrics(), 'redis_outages_total')).toBe(1)
    },
  )
})
