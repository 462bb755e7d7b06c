import { base64, type Core, formEncode } from './core.ts'
import type { RequestOptions, WithResponse } from './request-options.ts'
import { withResponse } from './request-options.ts'

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string
  token_type: string
  /** Lifetime in seconds. */
  expires_in?: number
  scope?: string
  [extension: string]: unknown
}

/** Renew a fetched token this long before it expires, so it never lapses in flight. */
const EXPIRY_MARGIN_MS = 30_000

/**
 * Access tokens for the v2 API. With a client id and secret it runs the client credentials
 * grant (RFC 6749 §4.4), authenticating with HTTP Basic (§2.3.1: both parts form-encoded
 * first), caches the token until shortly before it expires, and shares one request among
 * concurrent callers. With a fixed access token it just hands that out.
 */
export class OAuth {
  private cached: { token: TokenResponse; expiresAt: number } | undefined
  private pending: Promise<TokenResponse> | undefined

  constructor(
    private readonly core: () => Core,
    private readonly settings: {
      accessToken?: string | undefined
      clientId?: string | undefined
      clientSecret?: string | undefined
      scope?: string | undefined
      tokenPath: string
    },
  ) {}

  /** True when this client fetches (and renews) tokens itself. */
  get renewable(): boolean {
    return this.settings.clientId !== undefined && this.settings.clientSecret !== undefined
  }

  get configured(): boolean {
    return this.settings.accessToken !== undefined || this.renewable
  }

  /**
   * The current access token: the configured one, or a cached or freshly fetched client
   * credentials token (`{ forceRefresh: true }` fetches a new one).
   */
  async token(
    options: RequestOptions & { forceRefresh?: boolean } = {},
  ): Promise<WithResponse<TokenResponse>> {
    const { accessToken } = this.settings
    if (accessToken !== undefined) {
      return withResponse(
        { access_token: accessToken, token_type: 'Bearer' },
        { requestId: undefined, status: 200, headers: new Headers(), etag: undefined },
      )
    }
    if (!this.renewable) {
      throw new TypeError('No OAuth credentials: pass accessToken, or clientId and clientSecret.')
    }
    if (options.forceRefresh !== true && this.cached !== undefined && this.cached.expiresAt > Date.now()) {
      return this.cached.token as WithResponse<TokenResponse>
    }
    this.pending ??= this.fetchToken(options).finally(() => {
      this.pending = undefined
    })
    return (await this.pending) as WithResponse<TokenResponse>
  }

  /** The bearer token string, for the request core. */
  async bearer(refresh: boolean): Promise<string> {
    return (await this.token({ forceRefresh: refresh })).access_token
  }

  private async fetchToken(options: RequestOptions): Promise<TokenResponse> {
    const { clientId = '', clientSecret = '', scope, tokenPath } = this.settings
    const { body, info } = await this.core().send<TokenResponse>(
      {
        method: 'POST',
        path: tokenPath,
        form: { grant_type: 'client_credentials', scope },
        credential: { basic: base64(`${formComponent(clientId)}:${formComponent(clientSecret)}`) },
        // Asking twice for a token is harmless: the token endpoint needs no Idempotency-Key.
        idempotent: false,
      },
      options,
    )
    const token = withResponse(body, info)
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 300) * 1000
    this.cached = { token, expiresAt: Date.now() + Math.max(lifetimeMs - EXPIRY_MARGIN_MS, lifetimeMs / 2) }
    return token
  }
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B). */
function formComponent(value: string): string {
  return formEncode({ v: value }).slice(2)
}
