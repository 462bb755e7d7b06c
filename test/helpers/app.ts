import type { AddressInfo } from 'node:net'
import type { Tracer } from '@opentelemetry/api'
import type { FastifyInstance, FastifyServerOptions, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll } from 'vitest'
import type { Scope } from '../../src/access/scopes.ts'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { type BuildAppOptions, buildApp } from '../../src/app.ts'
import { type Config, loadConfig } from '../../src/config/config.ts'
import { databaseTimeouts, poolerSettings } from '../../src/db/database.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'
import { POOLER } from './postgres.ts'

export interface TestApp {
  app: FastifyInstance
  database: TestDatabase
  config: Config
  /** A new account (unique email) with an unrestricted API key, or restricted to `scopes`. */
  newAccount(options?: {
    scopes?: Scope[]
    expiresAt?: Date
  }): Promise<{ accountId: string; apiKey: string; keyId: string; email: string }>
  close(): Promise<void>
}

let accounts = 0

/**
 * The one way tests get an API key: a new account (unique email unless `email` is given) with a
 * key, unrestricted or restricted to `scopes`. Works on any test database, with or without an
 * app in this process (the server-process tests start theirs as a child).
 */
export async function accountWithKey(
  db: TestDatabase['db'],
  options: { email?: string; scopes?: Scope[]; expiresAt?: Date } = {},
): Promise<{ accountId: string; apiKey: string; keyId: string; email: string }> {
  const { account } = await findOrCreateAccount(
    db,
    options.email ?? `user${++accounts}-${Date.now()}@example.com`,
  )
  const { apiKey, info } = await createApiKey(db, {
    accountId: account.id,
    scopes: options.scopes ?? null,
    expiresAt: options.expiresAt ?? null,
  })
  return { accountId: account.id, apiKey, keyId: info.id, email: account.email }
}

export interface TestAppOptions {
  /** pino options (a stream to read the log lines); off by default. */
  logger?: FastifyServerOptions['logger']
  /** Trace the app and its database. */
  tracer?: Tracer
  /**
   * Another instance on this database (as behind a load balancer): the database is shared, and
   * left open by `close()`. By default each app gets a fresh database of the dialect.
   */
  database?: TestDatabase
  /** `false` to register test-only routes before calling `app.ready()` yourself. */
  ready?: boolean
  /** Webhooks: a DNS and a clock of the test's own (src/webhooks/). */
  webhooks?: BuildAppOptions['webhooks']
}

/**
 * The one way tests build the app: the real app on a fresh database of the project's dialect
 * (TEST_DB), logging off, rate limit off unless `env` asks. `startLiveServer` puts it on a socket.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const shared = options.database
  // The run's pooler in front of PostgreSQL, if any (test/helpers/postgres.ts), unless the test says.
  const base = { RATE_LIMIT_RPS: '0', DB_POOLER: POOLER, ...env }
  // The database's waits (DB_*_TIMEOUT_SECONDS) are the connection's, set when it opens.
  const databaseConfig = loadConfig(base)
  const database =
    shared ??
    (await createTestDatabase({
      timeouts: databaseTimeouts(databaseConfig),
      pooler: poolerSettings(databaseConfig),
      ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    }))
  const config = loadConfig({ ...base, DATABASE_URL: database.url })
  const app = await buildApp({
    config,
    database,
    logger: options.logger ?? false,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
  })
  if (options.ready !== false) await app.ready()
  return {
    app,
    database,
    config,
    newAccount: (options = {}) => accountWithKey(database.db, options),
    async close() {
      await app.close()
      if (shared === undefined) await database.destroy()
    },
  }
}

/**
 * The test app of a `describe` (or a file): built by `createTestApp` in a `beforeAll`, closed in
 * an `afterAll`, both registered here. Call it where the suite's hooks go; the handle it returns
 * is filled in by that `beforeAll`, so tests and later hooks use it as the app itself. `env` may
 * be a function, read when the app is built (for a value an earlier hook made).
 */
export function useTestApp(
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: TestAppOptions = {},
): TestApp {
  const handle = {} as TestApp
  let built: TestApp | undefined
  beforeAll(async () => {
    built = await createTestApp(typeof env === 'function' ? env() : env, options)
    Object.assign(handle, built)
  })
  afterAll(() => built?.close())
  return handle
}

export interface LiveServer extends TestApp {
  /** http://127.0.0.1:PORT of the real service, listening on a real socket. */
  url: string
}

/** The test app (see `createTestApp`) listening on a free loopback port, for real HTTP clients. */
export async function startLiveServer(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<LiveServer> {
  const t = await createTestApp(env, options)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  return { ...t, url: `http://127.0.0.1:${port}` }
}

export function basic(apiKey: string): string {
  return `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`
}

/** app.inject with the key as HTTP Basic user name, the way `curl -u KEY:` sends it. */
export function withKey(app: FastifyInstance, apiKey: string) {
  return (options: InjectOptions): Promise<LightMyRequestResponse> =>
    app.inject({ ...options, headers: { authorization: basic(apiKey), ...options.headers } })
}

export function form(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  }
}
