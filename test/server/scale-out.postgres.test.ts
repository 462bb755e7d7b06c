import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrations } from '../../src/db/migrations/index.ts'
import { KeyAuthenticator } from '../../src/keys/keys-service.ts'
import { randomBase62 } from '../../src/lib/ids.ts'
import { accountWithKey, basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { oauthClient } from '../helpers/oauth.ts'
import { pollUntil } from '../helpers/poll.ts'

/**
 * Several stateless instances on one PostgreSQL schema (PostgreSQL only: the file name keeps it
 * out of the SQLite project, see vitest.config.ts). Three real processes are started at the same
 * moment on an empty schema, sharing Redis (under a key prefix of this run) when TEST_REDIS_URL
 * is set, and every request below is spread across them.
 */
const REDIS_URL = process.env.TEST_REDIS_URL
const RATE = { rps: 1, burst: 40 }
const PUBLIC_URL = 'http://pets.scale-out.test'

describeDb('three instances on one PostgreSQL database', () => {
  let database: TestDatabase
  let servers: ServerProcess[] = []
  let bases: string[] = []

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false })
    const env = {
      DATABASE_URL: database.url,
      PUBLIC_URL,
      RATE_LIMIT_RPS: String(RATE.rps),
      RATE_LIMIT_BURST: String(RATE.burst),
      KEY_CACHE_SECONDS: '2',
      ...(REDIS_URL === undefined
        ? {}
        : { REDIS_URL, REDIS_KEY_PREFIX: `pet-service-test:${randomBase62(10)}:` }),
    }
    // At once, on an empty schema: they race to migrate it.
    servers = await Promise.all([0, 1, 2].map(() => startServerProcess(PET_SERVICE_BIN, env)))
    bases = servers.map((s) => `http://127.0.0.1:${s.port}`)
  }, 90_000)

  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL')
    await Promise.all(servers.map((s) => s.exited))
    await database?.destroy()
  })

  /** A new account with an unrestricted API key, written straight to the shared database. */
  async function newAccount(): Promise<{ accountId: string; apiKey: string; keyId: string }> {
    const { accountId, apiKey, keyId } = await accountWithKey(database.db)
    return { accountId, apiKey, keyId }
  }

  function call(
    instance: number,
    path: string,
    init: { method?: string; auth: string; form?: Record<string, string>; headers?: Record<string, string> },
  ): Promise<Response> {
    return fetch(`${bases[instance % bases.length]}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: init.auth,
        ...(init.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        ...init.headers,
      },
      ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form).toString() }),
      signal: AbortSignal.timeout(15_000),
    })
  }

  /** Polls every instance until `refused` holds on all of them; the seconds it took. */
  async function untilRefusedEverywhere(
    request: (instance: number) => Promise<Response>,
    refused: (res: Response) => boolean,
  ): Promise<number> {
    const pending = new Set([0, 1, 2])
    const tookMs = await pollUntil(async () => {
      for (const instance of [...pending]) {
        const res = await request(instance)
        await res.arrayBuffer()
        if (refused(res)) pending.delete(instance)
      }
      return pending.size === 0
    }, 10_000)
    expect([...pending], 'instances still accepting').toEqual([])
    return (tookMs ?? 10_000) / 1000
  }

  it('start together on an empty schema: each is ready, the migrations ran once', async () => {
    for (const base of bases) expect((await fetch(`${base}/readyz`)).status).toBe(200)
    const applied = await database.db
      .selectFrom('kysely_migration' as never)
      .selectAll()
      .execute()
    expect(applied).toHaveLength(Object.keys(migrations).length)
  })

  it('lose no acknowledged PATCH without If-Match, spread across the instances', async () => {
    const { apiKey } = await newAccount()
    const auth = basic(apiKey)
    const created = await call(0, '/v1/pet', { method: 'POST', auth, form: { name: 'w-start' } })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: number }

    // Nine writers, three per instance, each retrying a 409 concurrent_change as a client does.
    const acknowledged = await Promise.all(
      Array.from({ length: 9 }, async (_, writer) => {
        for (let attempt = 1; attempt <= 10; attempt++) {
          const res = await call(writer, `/v1/pet/${id}`, {
            method: 'PATCH',
            auth,
            form: { name: `w-${writer}` },
          })
          const body = (await res.json()) as { version?: number; name?: string; code?: string }
          if (res.status === 200) return { writer, version: body.version ?? 0, name: body.name }
          expect({ status: res.status, code: body.code }).toEqual({ status: 409, code: 'concurrent_change' })
        }
        throw new Error(`writer ${writer} never got its change in`)
      }),
    )
    // Each acknowledged write made exactly one version of its own, and the last one is what is stored.
    const versions = acknowledged.map((a) => a.version).sort((a, b) => a - b)
    expect(versions).toEqual(Array.from({ length: 9 }, (_, i) => i + 2))
    for (const a of acknowledged) expect(a.name).toBe(`w-${a.writer}`)
    const last = acknowledged.find((a) => a.version === 10)
    for (const instance of [0, 1, 2]) {
      const pet = (await (await call(instance, `/v1/pet/${id}`, { auth })).json()) as {
        version: number
        name: string
      }
      expect(pet).toMatchObject({ version: 10, name: last?.name })
    }
    const events = await database.db
      .selectFrom('events')
      .select('type')
      .where('type', '=', 'pet.updated')
      .where('object_id', '=', String(id))
      .execute()
    expect(events).toHaveLength(9)
  })

  it('let exactly one If-Match racer win each version; the others get 412', async () => {
    const { apiKey } = await newAccount()
    const auth = basic(apiKey)
    const created = await call(1, '/v1/pet', { method: 'POST', auth, form: { name: 'race' } })
    const { id } = (await created.json()) as { id: number }
    for (let round = 0; round < 3; round++) {
      const current = await call(round, `/v1/pet/${id}`, { auth })
      const etag = current.headers.get('etag') ?? ''
      await current.arrayBuffer()
      const racers = await Promise.all(
        Array.from({ length: 6 }, (_, racer) =>
          call(racer, `/v1/pet/${id}`, {
            method: 'PATCH',
            auth,
            form: { name: `r${round}-${racer}` },
            headers: { 'if-match': etag },
          }).then(async (res) => ({ status: res.status, body: (await res.json()) as { code?: string } })),
        ),
      )
      const statuses = racers.map((r) => r.status).sort()
      expect(statuses).toEqual([200, 412, 412, 412, 412, 412])
      for (const r of racers.filter((r) => r.status === 412)) expect(r.body.code).toBe('precondition_failed')
    }
    const pet = (await (await call(2, `/v1/pet/${id}`, { auth })).json()) as { version: number }
    expect(pet.version).toBe(4)
  })

  it('create once for one Idempotency-Key sent to all three at once', async () => {
    const { apiKey, accountId } = await newAccount()
    const auth = basic(apiKey)
    const key = `scale-${randomBase62(12)}`
    const send = (instance: number) =>
      call(instance, '/v1/pet', {
        method: 'POST',
        auth,
        form: { name: 'Once', species: 'dog' },
        headers: { 'idempotency-key': key },
      }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { id?: number; code?: string },
      }))
    const first = await Promise.all([0, 1, 2, 0, 1, 2].map(send))
    for (const res of first) {
      // The winner's 201 (or its replay), or "still running" for a racer that came too soon.
      if (res.status !== 201)
        expect(res).toMatchObject({ status: 409, body: { code: 'idempotency_request_in_progress' } })
    }
    const ids = new Set(first.filter((r) => r.status === 201).map((r) => r.body.id))
    expect(ids.size).toBe(1)
    // Retried afterwards anywhere: the same pet.
    for (const res of await Promise.all([0, 1, 2].map(send))) {
      expect(res.status).toBe(201)
      expect(ids.has(res.body.id)).toBe(true)
    }
    const pets = await database.db
      .selectFrom('pets')
      .select('id')
      .where('account_id', '=', accountId)
      .execute()
    expect(pets).toHaveLength(1)
  })

  it('refuse an API key everywhere within 5 s of its revocation', async () => {
    const { apiKey, keyId, accountId } = await newAccount()
    const auth = basic(apiKey)
    // Every instance has checked (and cached) the key.
    for (const instance of [0, 1, 2]) expect((await call(instance, '/v1/pet', { auth })).status).toBe(200)
    // What the dashboard and `pet-service keys revoke` do, from outside the three instances.
    expect(await new KeyAuthenticator(database.db, { cacheMs: 0 }).revoke(keyId, accountId)).toBe(true)
    const seconds = await untilRefusedEverywhere(
      (instance) => call(instance, '/v1/pet', { auth }),
      (res) => res.status === 401,
    )
    expect(seconds).toBeLessThan(5)
  })

  it('refuse an OAuth access token everywhere within 5 s of its revocation at /oauth/revoke', async () => {
    const { accountId } = await newAccount()
    const { clientId, clientSecret } = await oauthClient(database.db, { accountId, scopes: ['read:pets'] })
    const clientAuth = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
    const issued = await call(0, '/oauth/token', {
      method: 'POST',
      auth: clientAuth,
      form: { grant_type: 'client_credentials' },
    })
    expect(issued.status).toBe(200)
    const { access_token: token } = (await issued.json()) as { access_token: string }
    const bearer = `Bearer ${token}`
    for (const instance of [0, 1, 2]) {
      expect((await call(instance, '/v2/store/inventory', { auth: bearer })).status).toBe(200)
    }
    const revoked = await call(1, '/oauth/revoke', { method: 'POST', auth: clientAuth, form: { token } })
    expect(revoked.status).toBe(200)
    const seconds = await untilRefusedEverywhere(
      (instance) => call(instance, '/v2/store/inventory', { auth: bearer }),
      (res) => res.status === 401,
    )
    expect(seconds).toBeLessThan(5)
  })

  const sharedLimit =
    REDIS_URL === undefined
      ? 'SKIPPED: set TEST_REDIS_URL to run (the instances share rate limits through Redis)'
      : `share one account's rate limit: ${RATE.burst} at once and ${RATE.rps}/s across the three`
  it.skipIf(REDIS_URL === undefined)(sharedLimit, async () => {
    const { apiKey } = await newAccount()
    const auth = basic(apiKey)
    const started = Date.now()
    const responses = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        call(i, '/v1/pet', { auth }).then(async (res) => {
          await res.arrayBuffer()
          return res
        }),
      ),
    )
    const seconds = (Date.now() - started) / 1000
    const allowed = responses.filter((r) => r.status === 200).length
    expect(allowed).toBeGreaterThanOrEqual(RATE.burst)
    expect(allowed).toBeLessThanOrEqual(RATE.burst + Math.ceil(seconds * RATE.rps))
    const limited = responses.filter((r) => r.status === 429)
    expect(limited.length).toBe(responses.length - allowed)
    for (const res of limited) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })

  it('stop on SIGTERM with exit code 0, having logged no error or warning from start to exit', async () => {
    // By now each instance has polled the revocation list many times; none may have found its
    // table missing (a job started before the migrations ended) or the database closed.
    for (const server of servers) server.child.kill('SIGTERM')
    expect(await Promise.all(servers.map((s) => s.exited))).toEqual([0, 0, 0])
    for (const [i, server] of servers.entries()) {
      const output = server.output()
      expect(output, `instance ${i}`).not.toMatch(/does not exist/)
      const serious = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((entry) => entry.level >= 40)
      expect(serious, `instance ${i}`).toEqual([])
    }
  })
})
