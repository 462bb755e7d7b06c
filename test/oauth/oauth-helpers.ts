import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Scope } from '../../src/access/scopes.ts'
import { createClient } from '../../src/oauth/clients-service.ts'
import type { TestApp } from '../helpers/app.ts'

export interface TestClient {
  clientId: string
  clientSecret: string
  accountId: string
  email: string
  apiKey: string
}

/** A new account with an OAuth client (and an API key). */
export async function newClient(
  t: TestApp,
  options: { scopes?: Scope[]; redirectUris?: string[]; accountId?: string } = {},
): Promise<TestClient> {
  const account = await t.newAccount()
  const accountId = options.accountId ?? account.accountId
  const { clientSecret, info } = await createClient(t.database.db, {
    accountId,
    name: 'Test app',
    ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
    ...(options.redirectUris === undefined ? {} : { redirectUris: options.redirectUris }),
  })
  return { clientId: info.client_id, clientSecret, accountId, email: account.email, apiKey: account.apiKey }
}

export function clientBasic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`
}

export function formBody(fields: Record<string, string>) {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  }
}

/** POST /oauth/token with the client's secret in HTTP Basic. */
export async function tokenRequest(
  app: FastifyInstance,
  client: { clientId: string; clientSecret: string },
  fields: Record<string, string>,
) {
  const body = formBody(fields)
  return app.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: body.payload,
    headers: { ...body.headers, authorization: clientBasic(client.clientId, client.clientSecret) },
  })
}

/** A client-credentials access token. */
export async function accessToken(
  app: FastifyInstance,
  client: { clientId: string; clientSecret: string },
  scope?: string,
): Promise<string> {
  const res = await tokenRequest(app, client, {
    grant_type: 'client_credentials',
    ...(scope === undefined ? {} : { scope }),
  })
  if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`)
  return (res.json() as { access_token: string }).access_token
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  return { verifier, challenge }
}

/** A minimal cookie jar for app.inject: remembers Set-Cookie values, sends them back. */
export class CookieJar {
  readonly #cookies = new Map<string, string>()

  store(setCookie: string | string[] | undefined): void {
    for (const line of [setCookie ?? []].flat()) {
      const [pair = ''] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }

  value(name: string): string | undefined {
    return this.#cookies.get(name)
  }

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }
}

/** The path and query of an absolute or relative Location. */
export function pathOf(location: string | undefined): string {
  const url = new URL(location ?? '', 'http://localhost')
  return `${url.pathname}${url.search}`
}
