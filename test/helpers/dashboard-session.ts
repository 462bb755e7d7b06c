import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

/**
 * A minimal browser over app.inject for the dashboard's security tests: it keeps cookies,
 * reads the CSRF token out of the last page, and posts forms the way a browser does.
 */
export class SessionClient {
  readonly cookies = new Map<string, string>()
  lastPage = ''
  /** The Host header pages are asked for with (the dashboard's examples name that origin). */
  host: string | undefined

  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  #store(res: LightMyRequestResponse): void {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone =
        c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() < Date.now())
      if (gone) this.cookies.delete(c.name)
      else this.cookies.set(c.name, c.value)
    }
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({
      method: 'GET',
      url,
      remoteAddress: this.remoteAddress,
      headers: { cookie: this.cookieHeader, ...(this.host === undefined ? {} : { host: this.host }) },
    })
    this.#store(res)
    if (res.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = res.body
    return res
  }

  /** The CSRF token of the last page's first form. */
  get csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.lastPage)
    if (match === null) throw new Error('no CSRF token on the last page')
    return match[1]!
  }

  /** Posts a form; `_csrf` is added from the last page unless `csrf: false`. */
  async post(
    url: string,
    fields: Record<string, string | string[]>,
    options: { csrf?: boolean } = {},
  ): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams()
    if (options.csrf !== false) body.append('_csrf', this.csrf)
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one)
    const res = await this.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.remoteAddress,
      headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: body.toString(),
    })
    this.#store(res)
    if (res.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = res.body
    return res
  }

  async signUp(email: string, password = 'purple-otter-sings-42'): Promise<LightMyRequestResponse> {
    await this.get('/dashboard/sign-up')
    return this.post('/dashboard/sign-up', { email, password })
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    await this.get('/dashboard/sign-in')
    return this.post('/dashboard/sign-in', { email, password })
  }

  /** Creates an API key through the dashboard and returns the secret shown once. */
  async createKey(name: string, scopes?: string[]): Promise<string> {
    await this.get('/dashboard/keys')
    const res = await this.post('/dashboard/keys', {
      name,
      expiry: 'never',
      scopes: scopes ?? ['read:pets', 'write:pets', 'read:users', 'write:users'],
    })
    const match = /data-testid="new-key">([^<]+)</.exec(res.body)
    if (res.statusCode !== 200 || match === null) throw new Error(`key creation failed: ${res.statusCode}`)
    return match[1]!
  }
}
