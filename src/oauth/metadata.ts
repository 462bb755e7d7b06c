import { ALL_SCOPES } from '../access/scopes.ts'
import { CLIENT_AUTH_METHODS, OAUTH_MOUNT, TOKEN_AUTH_METHODS } from './provider.ts'
import { PROVIDER_ROUTES } from './provider-endpoints.ts'

/**
 * The authorisation server's metadata (RFC 8414 §2), served at
 * /.well-known/oauth-authorization-server. Written out rather than taken from the provider's
 * discovery endpoint, which describes an OpenID Provider (claims, id_token algorithms, userinfo)
 * that this service is not: every value here is something the service does offer.
 */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  const endpoint = (name: keyof typeof PROVIDER_ROUTES) => `${issuer}${OAUTH_MOUNT}${PROVIDER_ROUTES[name]}`
  return {
    issuer,
    authorization_endpoint: endpoint('authorization'),
    token_endpoint: endpoint('token'),
    revocation_endpoint: endpoint('revocation'),
    introspection_endpoint: endpoint('introspection'),
    jwks_uri: endpoint('jwks'),
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
    // `none`: public clients (browser apps) at the token and revocation endpoints; RFC 7662
    // introspection needs an authenticated client.
    token_endpoint_auth_methods_supported: TOKEN_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: TOKEN_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: the authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
  }
}
