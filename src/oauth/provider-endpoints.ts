/**
 * The provider's endpoints this service offers (README, "OAuth 2.0 and the v2 Petstore API"),
 * each at one canonical path under the mount. oidc-provider's own router ignores case and a
 * trailing slash and answers endpoints we do not offer (OpenID discovery, logout pages), so the
 * mount hands the provider only requests whose path is spelled exactly as below: whatever runs in
 * front of an endpoint then sees every request that endpoint answers, and every other path under
 * /oauth is our 404.
 */
export const PROVIDER_ROUTES = {
  authorization: '/authorize',
  token: '/token',
  revocation: '/revoke',
  introspection: '/introspect',
  jwks: '/jwks',
} as const

export type ProviderEndpointName = keyof typeof PROVIDER_ROUTES | 'resume'

export interface ProviderEndpoint {
  name: ProviderEndpointName
  /** The methods the endpoint takes (`Allow` of a 405). */
  methods: readonly string[]
}

const READ = ['GET', 'HEAD'] as const
const POST = ['POST'] as const

const BY_PATH = new Map<string, ProviderEndpoint>([
  [PROVIDER_ROUTES.authorization, { name: 'authorization', methods: READ }],
  [PROVIDER_ROUTES.token, { name: 'token', methods: POST }],
  [PROVIDER_ROUTES.revocation, { name: 'revocation', methods: POST }],
  [PROVIDER_ROUTES.introspection, { name: 'introspection', methods: POST }],
  [PROVIDER_ROUTES.jwks, { name: 'jwks', methods: READ }],
])

/** Where the browser returns after sign-in and consent: `/authorize/{interaction uid}`. */
const RESUME = /^\/authorize\/[\w-]{1,64}$/

/** The endpoint at exactly this path (relative to the mount, no query), if any. */
export function providerEndpoint(path: string): ProviderEndpoint | undefined {
  return BY_PATH.get(path) ?? (RESUME.test(path) ? { name: 'resume', methods: READ } : undefined)
}
