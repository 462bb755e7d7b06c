import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider'
import { ALL_SCOPES } from '../access/scopes.ts'
import { findAccountById, findSandboxOf, modeOf } from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import { providerSecret } from './clients-service.ts'
import { constantTimeEqual } from './constant-time.ts'
import type { OAuthKeys } from './oauth-keys.ts'
import { SIGNING_ALG } from './oauth-keys.ts'
import { DatabaseAdapter } from './oauth-store.ts'
import { PROVIDER_ROUTES } from './provider-endpoints.ts'
import { TTL } from './ttl.ts'

export { TTL }

/** Where the provider's endpoints live: `/oauth/token`, `/oauth/authorize`, … */
export const OAUTH_MOUNT = '/oauth'

/** Secrets are stored hashed, so only methods that send the secret itself can work. */
export const CLIENT_AUTH_METHODS: ['client_secret_basic', 'client_secret_post'] = [
  'client_secret_basic',
  'client_secret_post',
]
/** Those, and `none` for public clients (only their `client_id`; PKCE proves the caller). */
export const TOKEN_AUTH_METHODS: ['client_secret_basic', 'client_secret_post', 'none'] = [
  ...CLIENT_AUTH_METHODS,
  'none',
]

/** The audience of every access token (RFC 8707 resource indicator): the v2 API. */
export function resourceOf(issuer: string): string {
  return `${issuer}/v2`
}

export interface ProviderOptions {
  issuer: string
  db: Db
  keys: OAuthKeys
  /** Trust X-Forwarded-* headers; the mount (src/routes/oauth/provider-mount.ts) sets them to what Fastify concluded (src/http/trust-proxy.ts). */
  trustProxy: boolean
  /** Called when a grant is revoked (reused refresh token, revoked refresh token). */
  onGrantRevoked: (grantId: string) => Promise<void>
  /** The HTML page of an error answered in the browser (the interaction pages' look). */
  renderErrorPage: (error: string, description?: string) => string
}

/**
 * oidc-provider configured as a plain OAuth 2.1 authorisation server: code flow with PKCE S256
 * always required, client credentials, rotating refresh tokens, revocation, introspection, and
 * JWT access tokens (RFC 9068) for the v2 API. Every option below is documented at
 * https://github.com/panva/node-oidc-provider/blob/v9.x/docs/README.md#configuration-options
 */
export function createProvider(options: ProviderOptions): Provider {
  const { issuer, db, keys } = options
  const resource = resourceOf(issuer)
  const configuration: Configuration = {
    adapter: (name: string) => new DatabaseAdapter(db, name, options.onGrantRevoked),
    async findAccount(_ctx, sub) {
      const account = await findAccountById(db, sub)
      if (account === undefined) return undefined
      return { accountId: sub, claims: async () => ({ sub, email: account.email }) }
    },
    jwks: { keys: [keys.signing as never] },
    cookies: { keys: keys.cookies },
    scopes: ['openid', 'offline_access', ...ALL_SCOPES],
    responseTypes: ['code'],
    clientAuthMethods: TOKEN_AUTH_METHODS,
    // OAuth 2.1: PKCE for every client, S256 only (public clients have nothing else).
    pkce: { required: () => true },
    routes: PROVIDER_ROUTES,
    features: {
      devInteractions: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // A plain OAuth 2.1 server, not an OpenID Provider: no userinfo (/me), no logout pages.
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      clientCredentials: { enabled: true },
      // A client may inspect or revoke only its own tokens (another's look unknown).
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      // JWT access tokens need a resource server: every token is for the v2 API.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: ALL_SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: TTL.accessToken,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: SIGNING_ALG } },
        }),
      },
    },
    extraClientMetadata: { properties: ['account_id'] },
    // Whose records a token reaches: the signed-in account (code flow), or the client's owner.
    // A sandbox's app reaches only sandboxes: in the code flow, the signed-in account's sandbox.
    // Every token names its mode (`mode`: live or sandbox), as a sandbox key's prefix does.
    async extraTokenClaims(ctx, token) {
      const clientAccountId = ctx.oidc.client?.['account_id' as keyof typeof ctx.oidc.client] as
        | string
        | undefined
      const clientAccount =
        clientAccountId === undefined ? undefined : await findAccountById(db, clientAccountId)
      let accountId =
        'accountId' in token && typeof token.accountId === 'string' ? token.accountId : clientAccountId
      let account = accountId === clientAccountId ? clientAccount : await findAccountById(db, accountId ?? '')
      if (clientAccount !== undefined && modeOf(clientAccount) === 'sandbox' && account !== undefined) {
        if (modeOf(account) === 'live') {
          account = await findSandboxOf(db, account.id)
          if (account === undefined) {
            throw new errors.InvalidGrant('this is a sandbox app, and the signed-in account has no sandbox')
          }
          accountId = account.id
        }
      }
      const grantId = 'grantId' in token ? (token.grantId as string | undefined) : undefined
      return {
        account_id: accountId,
        mode: account === undefined ? 'live' : modeOf(account),
        ...(grantId === undefined ? {} : { gid: grantId }),
      }
    },
    // A refresh token whenever the client may use one (no `offline_access` ceremony), rotated
    // on every use; a reused one revokes its grant (oidc-provider does that on its own).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: TTL.accessToken,
      ClientCredentials: TTL.accessToken,
      AuthorizationCode: TTL.authorizationCode,
      RefreshToken: TTL.refreshToken,
      Interaction: TTL.interaction,
      Session: TTL.session,
      Grant: TTL.grant,
    },
    clientDefaults: {
      id_token_signed_response_alg: SIGNING_ALG,
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    interactions: { url: (_ctx, interaction) => `${OAUTH_MOUNT}/interaction/${interaction.uid}` },
    // Origins on CORS_ORIGINS are answered in front of the provider (src/http/cors.ts), which
    // then stands aside; a request from any other origin to the token, revocation or
    // introspection endpoint reaches this and is refused (and leaveCorsToTheService takes the
    // provider's own CORS headers off that refusal).
    clientBasedCORS: () => false,
    async renderError(ctx: KoaContextWithOIDC, out) {
      ctx.type = 'html'
      ctx.body = options.renderErrorPage(out.error ?? 'error', out.error_description)
    },
  }
  const provider = new Provider(issuer, configuration)
  provider.proxy = options.trustProxy
  provider.use(leaveCorsToTheService)
  compareHashedSecrets(provider)
  return provider
}

/**
 * oidc-provider answers every origin with `Access-Control-Allow-Origin` at its token, revocation,
 * introspection and key endpoints (its own CORS code, before it knows the client, so even an
 * `invalid_client` is readable by any page), unless a CORS header is already there. The service's
 * CORS (src/http/cors.ts, copied onto the response before the provider runs) is the only one:
 * when it set none, whatever CORS headers the provider added are taken off again.
 */
async function leaveCorsToTheService(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  const ours = Boolean(ctx.response.get('access-control-allow-origin'))
  try {
    await next()
  } finally {
    if (!ours) {
      for (const name of Object.keys(ctx.response.headers)) {
        if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name)
      }
    }
  }
}

/**
 * A client's `client_secret`, as the provider sees it, is the SHA-256 we store (clientMetadata):
 * compare it with the hash of what the client presented, so the stored hash itself never
 * authenticates, whichever path or endpoint reaches the comparison. Overriding this method of the
 * provider's Client class is the extension point its author points to for hashed secrets
 * (panva/node-oidc-provider#631); it costs the HS* algorithms keyed by the secret, which we do not
 * offer (clientAuthMethods above; tokens are signed with our own key).
 */
function compareHashedSecrets(provider: Provider): void {
  provider.Client.prototype.compareClientSecret = function compareClientSecret(presented: string) {
    return constantTimeEqual(providerSecret(presented), this.clientSecret ?? '')
  }
}
