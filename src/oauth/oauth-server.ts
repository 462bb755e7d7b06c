import type Provider from 'oidc-provider'
import type { Config } from '../config/config.ts'
import type { Db } from '../db/schema.ts'
import { loadOrCreateKeys } from './oauth-keys.ts'
import { purgeExpiredOAuthRows } from './oauth-store.ts'
import { createProvider, resourceOf } from './provider.ts'
import { RevocationList } from './revocations.ts'
import { TokenVerifier } from './token-verifier.ts'
import { TTL } from './ttl.ts'

/** The authorisation server's parts, as the HTTP layer (src/routes/oauth/) and the v2 API use them. */
export interface OAuthServer {
  issuer: string
  provider: Provider
  verifier: TokenVerifier
  revocations: RevocationList
  /** Records a client as deleted: its JWT access tokens are refused from now on. */
  clientDeleted(clientId: string): Promise<void>
}

/** What the server reports while it runs (the app's logger fits). */
export interface OAuthLog {
  warn(details: { err: unknown }, message: string): void
  error(details: { err: unknown }, message: string): void
}

export interface OAuthServerOptions {
  config: Config
  db: Db
  log: OAuthLog
  /** How often revocations made on other instances are read (ms); at most 5000. */
  revocationPollMs?: number | undefined
  /** The HTML page of an error the provider answers in the browser (src/routes/oauth/). */
  renderErrorPage: (error: string, description?: string) => string
}

/** The issuer identifier: PUBLIC_URL, else http://localhost:PORT (RFC 8414 §2: no path, no query). */
export function issuerOf(config: Config): string {
  return config.publicUrl === undefined ? `http://localhost:${config.port}` : new URL(config.publicUrl).origin
}

/**
 * Builds the authorisation server on the database: its signing keys, oidc-provider over our
 * store, the revocation list (polled, so revocations made on other instances apply here within
 * `revocationPollMs`), the verifier of the JWT access tokens it issues, and a sweep of expired
 * rows every 15 minutes. `stop` ends the polling and the sweep.
 */
export async function startOAuthServer(
  options: OAuthServerOptions,
): Promise<{ server: OAuthServer; stop: () => Promise<void> }> {
  const { config, db, log } = options
  const issuer = issuerOf(config)
  const keys = await loadOrCreateKeys(db)
  const revocations = new RevocationList(db, {
    pollMs: options.revocationPollMs ?? 2000,
    onError: (error) => log.warn({ err: error }, 'could not read OAuth revocations'),
  })
  await revocations.start()
  const revokeUntilTokensExpire = (subject: string) =>
    revocations.revoke(subject, new Date(Date.now() + TTL.accessToken * 1000 + 60_000))
  const provider = createProvider({
    issuer,
    db,
    keys,
    trustProxy: config.trustProxy !== false,
    onGrantRevoked: (grantId) => revokeUntilTokensExpire(`grant:${grantId}`),
    renderErrorPage: options.renderErrorPage,
  })
  provider.on('server_error', (_ctx, error) => log.error({ err: error }, 'oauth server error'))
  const verifier = new TokenVerifier(keys.verification, issuer, resourceOf(issuer), revocations)
  const purge = setInterval(
    () => {
      Promise.all([purgeExpiredOAuthRows(db), revocations.purge()]).catch((error: unknown) =>
        log.warn({ err: error }, 'could not purge expired OAuth rows'),
      )
    },
    15 * 60 * 1000,
  )
  purge.unref()
  const server: OAuthServer = {
    issuer,
    provider,
    verifier,
    revocations,
    clientDeleted: (clientId) => revokeUntilTokensExpire(`client:${clientId}`),
  }
  const stop = async () => {
    clearInterval(purge)
    await revocations.stop()
  }
  return { server, stop }
}
