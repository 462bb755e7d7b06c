import type { IncomingMessage, ServerResponse } from 'node:http'
import type { KoaContextWithOIDC } from 'oidc-provider'
import { pastTheAllowance, tooManyFailures } from '../../access/failed-attempts.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import { oauthError } from './raw-io.ts'

/**
 * Failed client authentication at the token, revocation and introspection endpoints, counted per
 * client address on the failed-attempt limiter the APIs' wrong keys and tokens draw on
 * (src/access/failed-attempts.ts): past its allowance the 401 `invalid_client` becomes a 429 with
 * `Retry-After`, still an RFC 6749 error, whether the provider answered it or we did. A client
 * that authenticates is served as before.
 */
export class FailedClients {
  readonly #limiter: RateLimiter | undefined
  /** Who sent each request, as Fastify concluded under TRUST_PROXY. */
  readonly #addresses = new WeakMap<IncomingMessage, string>()

  constructor(limiter: RateLimiter | undefined) {
    this.#limiter = limiter
  }

  /** Before the request is handed to the provider or answered in front of it. */
  remember(req: IncomingMessage, address: string): void {
    this.#addresses.set(req, address)
  }

  /** Answers a failed client authentication of our own (JWT revocation and introspection). */
  async refuse(req: IncomingMessage, res: ServerResponse, description: string): Promise<void> {
    const retryAfter = await this.#count(req)
    if (retryAfter === undefined) oauthError(res, 401, 'invalid_client', description)
    else
      oauthError(res, 429, 'invalid_client', tooManyFailures(retryAfter), {
        'retry-after': String(retryAfter),
      })
  }

  /** The provider's own 401s, counted the same way (a provider middleware: provider.use). */
  readonly middleware = async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next()
    if (ctx.status !== 401) return
    const retryAfter = await this.#count(ctx.req)
    if (retryAfter === undefined) return
    ctx.status = 429
    ctx.remove('www-authenticate')
    ctx.set('retry-after', String(retryAfter))
    ctx.body = { error: 'invalid_client', error_description: tooManyFailures(retryAfter) }
  }

  async #count(req: IncomingMessage): Promise<number | undefined> {
    const address = this.#addresses.get(req)
    if (this.#limiter === undefined || address === undefined) return undefined
    return pastTheAllowance(this.#limiter, address)
  }
}
