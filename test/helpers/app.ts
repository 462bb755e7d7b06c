import type { Tracer } from '@opentelemetry/api'
import type { FastifyInstance, FastifyServerOptions, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Scope } from '../../src/access/scopes.ts'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { type BuildAppOptions, buildApp } from '../../src/app.ts'
import { type Config, loadConfig } from '../../src/config/config.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'

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
 * The real app on a fresh database of the project's dialect, logging off, rate limit off unless
 * asked. `logger`: pino options (a stream to read the log lines); `tracer`: trace the app and
 * its database.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: {
    logger?: FastifyServerOptions['logger']
    tracer?: Tracer
    webhooks?: BuildAppOptions['webhooks']
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase(options.tracer === undefined ? {} : { tracer: options.tracer })
  const config = loadConfig({ RATE_LIMIT_RPS: '0', ...env, DATABASE_URL: database.url })
  const app = await buildApp({
    config,
    database,
    logger: options.logger ?? false,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
  })
  await app.ready()
  return {
    app,
    database,
    config,
    async newAccount(options = {}) {
      const email = `user${++accounts}-${Date.now()}@example.com`
      const { account } = await findOrCreateAccount(database.db, email)
      const { apiKey, info } = await createApiKey(database.db, {
        accountId: account.id,
        scopes: options.scopes ?? null,
        expiresAt: options.expiresAt ?? null,
      })
      return { accountId: account.id, apiKey, keyId: info.id, email }
    },
    async close() {
      await app.close()
      await database.destroy()
    },
  }
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
