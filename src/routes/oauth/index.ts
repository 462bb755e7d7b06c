import type { FastifyInstance } from 'fastify'
import type { Config } from '../../config/config.ts'
import type { Db } from '../../db/schema.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import { type OAuthServer, startOAuthServer } from '../../oauth/oauth-server.ts'
import { registerInteractionRoutes } from './interaction.ts'
import { renderErrorPage } from './interaction-pages.ts'
import { registerMetadataRoute } from './metadata.ts'
import { mountProvider } from './provider-mount.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The authorisation server: its provider, token verifier and revocation list. */
    oauth: OAuthServer
  }
}

export interface OAuthOptions {
  config: Config
  db: Db
  /** How often revocations made on other instances are read (ms); at most 5000. */
  revocationPollMs?: number
  /** Authorization requests per client address (each stores an Interaction row); none when unset. */
  authorizeLimiter?: RateLimiter
  /** Failed client authentications per address, on the limiter the APIs' wrong credentials share. */
  failedAttempts?: RateLimiter
}

/**
 * The OAuth HTTP surface, one file per concern as node-oidc-provider lays out its endpoints:
 *  - provider-mount.ts: oidc-provider's own endpoints under /oauth, behind
 *  - token-guard.ts: what runs in front of them: NUL refusal, the scope checks the provider
 *    leaves out (scope-checks.ts), revoke and introspect of JWT access tokens (jwt-tokens.ts),
 *    on the raw request (raw-io.ts);
 *  - metadata.ts: RFC 8414 authorization server metadata;
 *  - interaction.ts and interaction-pages.ts: the sign-in and consent pages.
 * The authorisation server itself (provider, keys, store, revocations) is src/oauth/.
 */
export async function registerOAuth(app: FastifyInstance, options: OAuthOptions): Promise<OAuthServer> {
  const { server, stop } = await startOAuthServer({
    config: options.config,
    db: options.db,
    log: app.log,
    revocationPollMs: options.revocationPollMs,
    renderErrorPage,
  })
  // Stopped as closing begins: onClose hooks run last-registered first, so the database (closed
  // by server.ts, which registers after this) would go before the poller stopped. Requests still
  // in flight were authenticated already, and no new ones are taken.
  app.addHook('preClose', stop)
  app.decorate('oauth', server)
  await app.register(async (scope) =>
    mountProvider(scope, server, {
      db: options.db,
      authorizeLimiter: options.authorizeLimiter,
      failedAttempts: options.failedAttempts,
    }),
  )
  registerMetadataRoute(app, server.issuer)
  await registerInteractionRoutes(app, { provider: server.provider, db: options.db })
  return server
}
