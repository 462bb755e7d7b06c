import { readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { SCOPES } from '../access/scopes.ts'
import { Problem } from '../schemas/common.ts'
import { ASSETS_DIR } from '../web/assets-dir.ts'
import { OAUTH_CLIENT_SECURITY_SCHEME, OAUTH_PATHS, OAUTH_SCHEMAS, OAUTH_TAG } from './oauth-paths.ts'
import { nameComponents, V1_COMPONENTS } from './openapi-components.ts'

/**
 * The OpenAPI 3.1 document is generated from the route schemas at `/openapi.json`; `/docs`
 * serves Swagger UI from its npm package (no CDN). It is meant for SDK generators too: its
 * server is `PUBLIC_URL` (or `/`, the origin it was fetched from), every v1 object is a named
 * component (openapi-components.ts), and the OAuth endpoints are described (oauth-paths.ts).
 */
export async function registerOpenApi(
  app: FastifyInstance,
  version: string,
  publicUrl: string | undefined,
): Promise<void> {
  app.addSchema(Problem)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      servers: [
        {
          url: publicUrl ?? '/',
          description:
            publicUrl === undefined ? 'The origin this document was fetched from.' : 'This service.',
        },
      ],
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
              'OAuth 2.0 (RFC 6749/OAuth 2.1): authorization code with PKCE S256 (public clients, such as browser apps, send only their client_id), client credentials (client secret via HTTP Basic), rotating refresh tokens. Metadata at /.well-known/oauth-authorization-server.',
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
          oauth_client: OAUTH_CLIENT_SECURITY_SCHEME,
          api_key: {
            type: 'apiKey',
            name: 'api_key',
            in: 'header',
            description:
              'Your API key (pet_sk_…) in the `api_key` header; v2 takes it where the Petstore does (get and delete a pet, the inventory).',
          },
        },
      },
      // v2 keeps the Swagger Petstore's own tags (`pet`, `store`, `user`: generated Petstore
      // clients group operations by them); v1 uses the same names with a `v1-` prefix.
      tags: [
        { name: 'v1-pet', description: 'v1: create and manage pets with an API key.' },
        { name: 'v1-user', description: 'v1: pet owners in your account, with an API key.' },
        {
          name: 'v1-order',
          description: 'v1: store orders for your pets (the records of /v2/store/order), with an API key.',
        },
        {
          name: 'v1-event',
          description: 'v1: what changed in your account (list, get, live stream), with an API key.',
        },
        {
          name: 'v1-webhook',
          description: 'v1: webhook endpoints that receive signed events, and their delivery log.',
        },
        {
          name: 'v1-request-log',
          description:
            'v1: the API requests of your account and their answers (failures with their bodies, redacted).',
        },
        {
          name: 'v1-account',
          description: "v1: the calling key's account, live or sandbox.",
        },
        { name: 'pet', description: 'v2 (Swagger Petstore compatible): everything about your pets.' },
        { name: 'store', description: 'v2: the inventory of your pets by status, and orders for them.' },
        { name: 'user', description: 'v2: pet owners, with integer ids and camelCase fields.' },
        OAUTH_TAG,
        { name: 'service', description: 'Health, readiness and error descriptions.' },
      ],
    },
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject
      return withOAuth(nameComponents(documents.openapiObject as Record<string, unknown>, V1_COMPONENTS))
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  })
  const icon = readFileSync(new URL('icon.svg', ASSETS_DIR))
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // The plugin's policy ends with `upgrade-insecure-requests`: served over plain http under
    // any host name but localhost, the browser then asks for every asset over https and the
    // page stays blank. Whoever serves https sends no http links anyway.
    transformStaticCSP: (policy) => policy.replace(/\s*upgrade-insecure-requests;?/, ''),
    logo: { type: 'image/svg+xml', content: icon, href: '/docs' },
    theme: {
      title: 'Pet Service API reference',
      favicon: [{ filename: 'icon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: icon }],
      css: [{ filename: 'pet-service.css', content: DOCS_CSS }],
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

/** The OAuth endpoints and their schemas, beside the routes' own. */
function withOAuth(document: Record<string, unknown>): Record<string, unknown> {
  const components = document.components as { schemas?: Record<string, unknown> }
  return {
    ...document,
    paths: { ...(document.paths as Record<string, unknown>), ...OAUTH_PATHS },
    components: { ...components, schemas: { ...components.schemas, ...OAUTH_SCHEMAS } },
  }
}

/** The product's name beside its logo in Swagger UI's top bar (the logo alone has no text). */
const DOCS_CSS = `.swagger-ui .topbar .topbar-wrapper > a.link { gap: 10px; text-decoration: none; }
.swagger-ui .topbar .topbar-wrapper > a.link::after { content: 'Pet Service API'; color: #fff; font: 600 1.1em sans-serif; }
.swagger-ui .topbar { background: #312e81; }`
