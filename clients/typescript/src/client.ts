import { type Call, Core, type HttpMethod, type QueryValue } from './core.ts'
import { OAuth } from './oauth.ts'
import { type RequestOptions, type WithResponse, withResponse } from './request-options.ts'
import { AccountResource } from './resources/account.ts'
import { Events } from './resources/events.ts'
import { Orders } from './resources/orders.ts'
import { Pets } from './resources/pets.ts'
import { RequestLogs } from './resources/request-logs.ts'
import { Users } from './resources/users.ts'
import { WebhookEndpoints } from './resources/webhook-endpoints.ts'
import { webhooks } from './webhooks.ts'

export interface PetServiceOptions {
  /** Where the service runs, e.g. `https://pets.example.com`. Default `http://localhost:8080`. */
  baseUrl?: string
  /** An API key (`pet_sk_…`), sent as the HTTP Basic user name with an empty password. */
  apiKey?: string
  /** A ready OAuth access token, sent as `Authorization: Bearer …`. */
  accessToken?: string
  /** OAuth client id: with `clientSecret`, tokens are fetched and renewed for you. */
  clientId?: string
  clientSecret?: string
  /** Scopes to ask for, e.g. `"read:pets write:pets"`. */
  scope?: string | string[]
  /** Token endpoint, relative to `baseUrl` or absolute. Default `/oauth/token`. */
  tokenUrl?: string
  /** Milliseconds per attempt before a call fails with TimeoutError. Default 30 000. */
  timeout?: number
  /** Retries of a failed call (network errors, 409 in progress, 429, 5xx). Default 2. */
  maxRetries?: number
  /** Headers sent with every request. */
  headers?: Record<string, string>
  /** A fetch implementation; defaults to the global one (Node ≥ 20, browsers). */
  fetch?: typeof fetch
}

export const DEFAULT_BASE_URL = 'http://localhost:8080'

/**
 * The Pet Service API.
 *
 * ```ts
 * const client = new PetService({ apiKey: 'pet_sk_...', baseUrl: 'https://pets.example.com' })
 * const pet = await client.pets.create({ name: 'Rex', species: 'dog' })
 * for await (const p of client.pets.list({ species: 'dog' })) console.log(p.name)
 * ```
 */
export class PetService {
  readonly pets: Pets
  readonly users: Users
  /** Store orders for your pets (`/v1/order`). */
  readonly orders: Orders
  /** Events: `list`, `get`, and `stream` (live, Server-Sent Events). */
  readonly events: Events
  readonly webhookEndpoints: WebhookEndpoints
  /** Request logs: `list` and `get` (what your integration sent, and what it was answered). */
  readonly requestLogs: RequestLogs
  /** The key's account, live or sandbox: `await client.account.retrieve()`. */
  readonly account: AccountResource
  /** OAuth tokens: `await client.oauth.token()`. */
  readonly oauth: OAuth
  /** Webhook signatures, `await client.webhooks.verify(rawBody, headers, secret)` (also exported as `webhooks`). */
  readonly webhooks = webhooks
  private readonly core: Core

  constructor(options: PetServiceOptions = {}) {
    const baseUrl = options.baseUrl ?? DEFAULT_BASE_URL
    const scope = Array.isArray(options.scope) ? options.scope.join(' ') : options.scope
    const tokenUrl = options.tokenUrl ?? '/oauth/token'
    if ((options.clientId === undefined) !== (options.clientSecret === undefined)) {
      throw new TypeError('Pass clientId and clientSecret together.')
    }
    this.oauth = new OAuth(() => this.core, {
      accessToken: options.accessToken,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      scope,
      tokenPath: tokenUrl,
    })
    const fetchImpl = options.fetch ?? globalThis.fetch
    if (typeof fetchImpl !== 'function') throw new TypeError('No fetch available: pass options.fetch.')
    this.core = new Core({
      baseUrl,
      apiKey: options.apiKey,
      timeout: options.timeout ?? 30_000,
      maxRetries: options.maxRetries ?? 2,
      // Unbound, a browser's fetch throws "Illegal invocation".
      fetch: fetchImpl.bind(globalThis),
      headers: options.headers ?? {},
      token: this.oauth.configured ? (refresh) => this.oauth.bearer(refresh) : undefined,
      tokenRenewable: this.oauth.renewable,
    })
    this.pets = new Pets(this.core)
    this.users = new Users(this.core)
    this.orders = new Orders(this.core)
    this.events = new Events(this.core)
    this.webhookEndpoints = new WebhookEndpoints(this.core)
    this.requestLogs = new RequestLogs(this.core)
    this.account = new AccountResource(this.core)
  }

  /**
   * Any other operation, e.g. `client.request('GET', '/v2/pet/findByStatus', { query: { status:
   * 'sold' } })`, with the same credentials, retries and errors. `/v2/…` paths use the OAuth
   * token when one is configured, everything else the API key.
   */
  async request<T extends object = Record<string, unknown>>(
    method: HttpMethod,
    path: string,
    params: { query?: Record<string, QueryValue>; body?: unknown } = {},
    options?: RequestOptions,
  ): Promise<WithResponse<T>> {
    const call: Call = {
      method,
      path,
      query: params.query,
      json: params.body,
      credential: path.startsWith('/v2/') ? 'token' : 'key',
    }
    const { body, info } = await this.core.send<T>(call, options)
    return withResponse((body ?? {}) as T, info)
  }
}
