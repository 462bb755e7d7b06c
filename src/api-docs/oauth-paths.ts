import { ALL_SCOPES } from '../access/scopes.ts'

/**
 * The authorisation server's endpoints in the OpenAPI document. oidc-provider answers them, not
 * Fastify routes with schemas, so they are described here, as the provider and the guard in
 * front of it (src/routes/oauth/) answer them: form bodies in, RFC 6749 JSON out (errors
 * included: `{"error": …}`, not problem documents).
 */

const TAG = 'oauth'

export const OAUTH_TAG = {
  name: TAG,
  description:
    'The OAuth 2.0 authorisation server (OAuth 2.1 rules): tokens for the v2 API. Errors are RFC 6749 JSON (`{"error":"invalid_grant",…}`), not problem documents.',
}

/** How a client authenticates at the token, revocation and introspection endpoints. */
export const OAUTH_CLIENT_SECURITY_SCHEME = {
  type: 'http' as const,
  scheme: 'basic',
  description:
    'A confidential client: `client_id` as the user name, `client_secret` as the password (or both as form fields). Public clients send only `client_id` in the form.',
}

const form = (schema: Record<string, unknown>) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema } },
})
const json = (description: string, ref: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
})
const oauthError = (description: string) => json(description, 'OAuthError')
const clientAuth = [{ oauth_client: [] }, {}]

export const OAUTH_SCHEMAS: Record<string, Record<string, unknown>> = {
  OAuthTokenRequest: {
    type: 'object',
    required: ['grant_type'],
    properties: {
      grant_type: { type: 'string', enum: ['authorization_code', 'client_credentials', 'refresh_token'] },
      code: { type: 'string', description: 'authorization_code: the code the redirect carried.' },
      redirect_uri: { type: 'string', description: 'authorization_code: the redirect URI of the request.' },
      code_verifier: {
        type: 'string',
        description: 'authorization_code: the PKCE verifier behind `code_challenge` (required).',
      },
      refresh_token: { type: 'string', description: 'refresh_token: the latest refresh token (it rotates).' },
      scope: { type: 'string', description: `Space-separated, among ${ALL_SCOPES.join(' ')}.` },
      client_id: { type: 'string', description: 'Public clients, and confidential ones not using Basic.' },
      client_secret: { type: 'string', description: 'Confidential clients not using Basic.' },
    },
  },
  OAuthTokenResponse: {
    type: 'object',
    required: ['access_token', 'token_type', 'expires_in'],
    properties: {
      access_token: { type: 'string', description: 'An RFC 9068 JWT for the v2 API.' },
      token_type: { type: 'string', enum: ['Bearer'] },
      expires_in: { type: 'integer', examples: [3600] },
      scope: { type: 'string' },
      refresh_token: {
        type: 'string',
        description: 'Code flow only; each use answers a new one and retires the old.',
      },
    },
  },
  OAuthTokenRevocationRequest: {
    type: 'object',
    required: ['token'],
    properties: {
      token: { type: 'string' },
      token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
      client_id: { type: 'string' },
      client_secret: { type: 'string' },
    },
  },
  OAuthIntrospectionResponse: {
    type: 'object',
    required: ['active'],
    properties: {
      active: { type: 'boolean' },
      client_id: { type: 'string' },
      scope: { type: 'string' },
      sub: { type: 'string' },
      exp: { type: 'integer' },
      iat: { type: 'integer' },
      iss: { type: 'string' },
      token_type: { type: 'string' },
    },
  },
  OAuthError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'string',
        examples: ['invalid_grant', 'invalid_client', 'invalid_request', 'invalid_scope'],
      },
      error_description: { type: 'string' },
    },
  },
  JsonWebKeySet: {
    type: 'object',
    required: ['keys'],
    properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } },
  },
  AuthorizationServerMetadata: {
    type: 'object',
    description: 'RFC 8414 authorization server metadata.',
    additionalProperties: true,
    required: ['issuer', 'authorization_endpoint', 'token_endpoint'],
    properties: {
      issuer: { type: 'string' },
      authorization_endpoint: { type: 'string' },
      token_endpoint: { type: 'string' },
      revocation_endpoint: { type: 'string' },
      introspection_endpoint: { type: 'string' },
      jwks_uri: { type: 'string' },
      scopes_supported: { type: 'array', items: { type: 'string' } },
    },
  },
}

const query = (name: string, description: string, required = true, values?: string[]) => ({
  name,
  in: 'query',
  required,
  description,
  schema: values === undefined ? { type: 'string' } : { type: 'string', enum: values },
})

export const OAUTH_PATHS: Record<string, Record<string, unknown>> = {
  '/oauth/token': {
    post: {
      operationId: 'oauthToken',
      summary: 'Get an access token (client credentials, authorization code with PKCE, refresh token)',
      tags: [TAG],
      security: clientAuth,
      requestBody: form({ $ref: '#/components/schemas/OAuthTokenRequest' }),
      responses: {
        200: json('The tokens.', 'OAuthTokenResponse'),
        400: oauthError('invalid_request, invalid_grant, invalid_scope, unsupported_grant_type.'),
        401: oauthError('invalid_client: unknown client, wrong secret.'),
      },
    },
  },
  '/oauth/revoke': {
    post: {
      operationId: 'oauthRevoke',
      summary: 'Revoke an access or refresh token of this client (RFC 7009)',
      tags: [TAG],
      security: clientAuth,
      requestBody: form({ $ref: '#/components/schemas/OAuthTokenRevocationRequest' }),
      responses: {
        200: { description: 'Revoked, or unknown (RFC 7009 answers both alike).' },
        400: oauthError('invalid_request.'),
        401: oauthError('invalid_client.'),
      },
    },
  },
  '/oauth/introspect': {
    post: {
      operationId: 'oauthIntrospect',
      summary: 'Inspect a token of this client (RFC 7662; confidential clients only)',
      tags: [TAG],
      security: [{ oauth_client: [] }],
      requestBody: form({ $ref: '#/components/schemas/OAuthTokenRevocationRequest' }),
      responses: {
        200: json(
          "`active: false` for an expired, revoked or another client's token.",
          'OAuthIntrospectionResponse',
        ),
        401: oauthError('invalid_client.'),
      },
    },
  },
  '/oauth/authorize': {
    get: {
      operationId: 'oauthAuthorize',
      summary: 'Start the authorization code flow in the browser (sign-in and consent pages)',
      description:
        'Opened in the browser, never fetched by a script: the account holder signs in and consents, then the browser is redirected to `redirect_uri` with `code`, `state` and `iss` (or `error`).',
      tags: [TAG],
      security: [],
      parameters: [
        query('response_type', 'Always `code`.', true, ['code']),
        query('client_id', 'The client (pet_ci_…).'),
        query('redirect_uri', 'One of the client’s registered redirect URIs.'),
        query('scope', `Space-separated, among ${ALL_SCOPES.join(' ')}.`),
        query('state', 'Returned unchanged with the code.', false),
        query('code_challenge', 'BASE64URL(SHA-256(code_verifier)).'),
        query('code_challenge_method', 'Always `S256`.', true, ['S256']),
      ],
      responses: {
        303: { description: 'To the sign-in page, or back to the client with the code.' },
        400: { description: 'An HTML page naming the error (unknown client or redirect URI).' },
        429: { description: 'Too many authorization requests from this address.' },
      },
    },
  },
  '/oauth/jwks': {
    get: {
      operationId: 'oauthJwks',
      summary: 'The public keys that sign access tokens',
      tags: [TAG],
      security: [],
      responses: { 200: json('A JWK set (ES256).', 'JsonWebKeySet') },
    },
  },
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauthMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      tags: [TAG],
      security: [],
      responses: {
        200: json('The endpoints, scopes and methods this server offers.', 'AuthorizationServerMetadata'),
      },
    },
  },
}
