import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { SCOPES } from '../auth/scopes.ts'
import { Problem } from '../schemas/common.ts'

/**
 * The OpenAPI 3.1 document is generated from the route schemas at `/openapi.json`; `/docs`
 * serves Swagger UI from its npm package (no CDN).
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  app.addSchema(Problem)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pet Service',
        version,
        description:
          'Pet records for many accounts. v1: form or JSON in, snake_case JSON out, API key auth (HTTP Basic user name, empty password). Errors are RFC 9457 problem documents.',
      },
      components: {
        securitySchemes: {
          apiKeyBasic: {
            type: 'http',
            scheme: 'basic',
            description:
              'Your API key (pet_sk_…) as the user name, with an empty password: `curl -u pet_sk_...: …`.',
          },
          apiKeyBearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'Your API key (pet_sk_…) as a bearer token: `Authorization: Bearer pet_sk_...`.',
          },
          // v2 (Swagger Petstore names): OAuth 2.0 with JWT access tokens, or the `api_key` header.
          petstore_auth: {
            type: 'oauth2',
            description:
              'OAuth 2.0 (RFC 6749/OAuth 2.1): authorization code with PKCE S256, client credentials (client secret via HTTP Basic), rotating refresh tokens. Metadata at /.well-known/oauth-authorization-server.',
            flows: {
              authorizationCode: {
                authorizationUrl: '/oauth/authorize',
                tokenUrl: '/oauth/token',
                refreshUrl: '/oauth/token',
                scopes: { ...SCOPES },
              },
              clientCredentials: {
                tokenUrl: '/oauth/token',
                refreshUrl: '/oauth/token',
                scopes: { ...SCOPES },
              },
            },
          },
          api_key: {
            type: 'apiKey',
            name: 'api_key',
            in: 'header',
            description:
              'Your API key (pet_sk_…) in the `api_key` header; v2 takes it where the Petstore does (get and delete a pet, the inventory).',
          },
        },
      },
      tags: [
        { name: 'Pets (v1)', description: 'Create and manage pets with an API key.' },
        { name: 'Users (v1)', description: 'Pet owners in your account.' },
        { name: 'pet', description: 'v2 (Swagger Petstore compatible): everything about your pets.' },
        { name: 'store', description: 'v2: the inventory of your pets by status.' },
        { name: 'user', description: 'v2: pet owners, with integer ids and camelCase fields.' },
        { name: 'Operations', description: 'Health, readiness and error descriptions.' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
