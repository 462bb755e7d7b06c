import { expect, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { basic, createTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

const REDIS_URL = process.env.TEST_REDIS_URL

describeDb('rate limit shared through Redis', () => {
  // CI sets TEST_REDIS_URL (a local Redis); elsewhere there may be no server, and the name says so.
  const name =
    REDIS_URL === undefined ? 'SKIPPED: set TEST_REDIS_URL to run' : 'counts one account across two instances'
  it.skipIf(REDIS_URL === undefined)(name, async () => {
    // A loaded machine can make Redis answer later than the default 0.5 s, and each instance would
    // then fall back to a bucket of its own (tested in test/faults/redis-away.sqlite.test.ts); here the shared
    // bucket is under test, so Redis gets time to answer.
    const env = {
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '3',
      REDIS_URL: REDIS_URL!,
      REDIS_TIMEOUT_SECONDS: '5',
    }
    const a = await createTestApp(env)
    const b = await buildApp({ config: a.config, database: a.database, logger: false })
    try {
      const { apiKey } = await a.newAccount()
      const started = Date.now()
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? a.app : b).inject({
            method: 'GET',
            url: '/v1/pet',
            headers: { authorization: basic(apiKey) },
          }),
        ),
      )
      const elapsedSeconds = (Date.now() - started) / 1000
      const allowed = responses.filter((r) => r.statusCode === 200).length
      // One bucket for both instances: the burst of 3, plus at most one per second that passed.
      expect(allowed).toBeGreaterThanOrEqual(3)
      expect(allowed).toBeLessThanOrEqual(3 + Math.ceil(elapsedSeconds))
      expect(responses.filter((r) => r.statusCode === 429).length).toBe(10 - allowed)
    } finally {
      await b.close()
      await a.close()
    }
  })
})
