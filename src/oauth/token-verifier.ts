import { createLocalJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose'
import { isScope, type Scope } from '../access/scopes.ts'
import { sha256Hex } from '../lib/hash.ts'
import { SIGNING_ALG } from './oauth-keys.ts'
import type { RevocationList } from './revocations.ts'

/** What a verified access token says. */
export interface AccessTokenClaims extends JWTPayload {
  jti: string
  exp: number
  client_id: string
  account_id: string
  /** `sandbox` on a sandbox's tokens (src/oauth/provider.ts); older tokens lack it: live. */
  mode?: 'live' | 'sandbox'
  scope?: string
  gid?: string
}

export class InvalidTokenError extends Error {}

export interface VerifiedToken {
  claims: AccessTokenClaims
  scopes: Set<Scope>
}

const MAX_CACHED = 10_000

/**
 * Verifies RFC 9068 JWT access tokens against the provider's public key, without the database.
 * A verified token is cached (by its SHA-256) until it expires, so a busy client costs one
 * signature check per token, not per request; revocation is checked on every request against
 * the in-memory RevocationList.
 */
export class TokenVerifier {
  readonly #cache = new Map<string, VerifiedToken>()
  readonly #jwks: ReturnType<typeof createLocalJWKSet>

  constructor(
    jwk: Record<string, unknown>,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly revocations: RevocationList,
  ) {
    this.#jwks = createLocalJWKSet({ keys: [jwk] })
  }

  /**
   * Checks signature, issuer, audience, type (`at+jwt`) and the required claims (`exp`, `iat`,
   * `jti`, `client_id`, `account_id`); ignores expiry when `ignoreExpiry` (revocation).
   */
  async decode(token: string, options: { ignoreExpiry?: boolean } = {}): Promise<AccessTokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.#jwks, {
        issuer: this.issuer,
        audience: this.audience,
        typ: 'at+jwt',
        algorithms: [SIGNING_ALG],
        // RFC 9068 §2.2: exp and iat are required. Without exp a token would never expire.
        requiredClaims: ['exp', 'iat', 'jti'],
        ...(options.ignoreExpiry ? { currentDate: new Date(0) } : {}),
      })
      const claims = payload as AccessTokenClaims
      if (
        typeof claims.jti !== 'string' ||
        typeof claims.account_id !== 'string' ||
        typeof claims.client_id !== 'string'
      ) {
        throw new InvalidTokenError('The access token lacks required claims.')
      }
      return claims
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error
      if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError('The access token has expired.')
      throw new InvalidTokenError('The access token is not valid (malformed, or not signed by this service).')
    }
  }

  async verify(token: string): Promise<VerifiedToken> {
    const key = sha256Hex(token)
    let verified = this.#cache.get(key)
    if (verified === undefined) {
      const claims = await this.decode(token)
      verified = {
        claims,
        scopes: new Set((claims.scope ?? '').split(' ').filter(isScope)),
      }
      if (this.#cache.size >= MAX_CACHED) this.#evictExpired()
      this.#cache.set(key, verified)
    }
    const { claims } = verified
    if (claims.exp * 1000 <= Date.now()) {
      this.#cache.delete(key)
      throw new InvalidTokenError('The access token has expired.')
    }
    if (this.isRevoked(claims)) throw new InvalidTokenError('The access token has been revoked.')
    return verified
  }

  isRevoked(claims: AccessTokenClaims): boolean {
    return (
      this.revocations.isRevoked(`jti:${claims.jti}`) ||
      this.revocations.isRevoked(`client:${claims.client_id}`) ||
      (claims.gid !== undefined && this.revocations.isRevoked(`grant:${claims.gid}`))
    )
  }

  #evictExpired(): void {
    const now = Date.now()
    for (const [key, entry] of this.#cache) if (entry.claims.exp * 1000 <= now) this.#cache.delete(key)
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear()
  }
}
