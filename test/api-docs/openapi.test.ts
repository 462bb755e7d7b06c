import { readFileSync } from 'node:fs'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { expect, it } from 'vitest'
import { renderErrorDocs } from '../../scripts/write-error-docs.ts'
import { V1_COMPONENTS } from '../../src/api-docs/openapi-components.ts'
import { ERRORS } from '../../src/errors/registry.ts'
import { createTestApp, useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

interface OperationDoc {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>
}

describeDb('API documentation', () => {
  const t = useTestApp()

  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    const doc = res.json()
    expect(doc.openapi).toBe('3.1.0')
    for (const path of ['/v1/pet', '/v1/pet/{id}', '/v1/user', '/v1/user/{id}'])
      expect(doc.paths, path).toHaveProperty([path])
    const create = doc.paths['/v1/pet'].post
    expect(create.operationId).toBe('createPet')
    expect(create.security).toEqual([{ apiKeyBasic: [] }, { apiKeyBearer: [] }])
    expect(Object.keys(create.requestBody.content)).toEqual(expect.arrayContaining(['application/json']))
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name'])
    expect(doc.components.securitySchemes.apiKeyBasic).toMatchObject({ type: 'http', scheme: 'basic' })
  })

  it('documents store orders on both faces: the Petstore Order and its operations, and /v1/order', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(doc.components.schemas.Order.properties).toMatchObject({
      id: { type: 'integer', format: 'int64' },
      petId: { type: 'integer', format: 'int64' },
      quantity: { type: 'integer', format: 'int32' },
      shipDate: { type: 'string', format: 'date-time' },
      status: { type: 'string', enum: ['placed', 'approved', 'delivered'] },
      complete: { type: 'boolean' },
    })
    const place = doc.paths['/v2/store/order'].post
    expect(place.operationId).toBe('placeOrder')
    expect(place.security).toEqual([{ petstore_auth: ['write:orders'] }])
    expect(place.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/Order')
    expect(place.responses['400'].description).toBeDefined()
    const byId = doc.paths['/v2/store/order/{orderId}']
    expect([byId.get.operationId, byId.delete.operationId]).toEqual(['getOrderById', 'deleteOrder'])
    expect(Object.keys(byId.get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']))
    expect(Object.keys(doc.paths['/v1/order'])).toEqual(expect.arrayContaining(['get', 'post']))
    expect(Object.keys(doc.paths['/v1/order/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    )
    expect(doc.components.securitySchemes.petstore_auth.flows.clientCredentials.scopes).toHaveProperty([
      'write:orders',
    ])
  })

  it('groups operations under one tag naming scheme: the Petstore names for v2, v1- before them for v1', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const declared: string[] = doc.tags.map((tag: { name: string }) => tag.name)
    expect(declared).toEqual([
      'v1-pet',
      'v1-user',
      'v1-order',
      'v1-event',
      'v1-webhook',
      'v1-request-log',
      'v1-account',
      'pet',
      'store',
      'user',
      'oauth',
      'service',
    ])
    const used = new Map<string, Set<string>>()
    for (const [path, item] of Object.entries<Record<string, { tags?: string[] }>>(doc.paths)) {
      for (const operation of Object.values(item)) {
        expect(operation.tags, path).toHaveLength(1)
        const tag = operation.tags![0]!
        expect(declared, path).toContain(tag)
        used.set(tag, (used.get(tag) ?? new Set()).add(path))
      }
    }
    for (const path of used.get('v1-pet')!) expect(path).toMatch(/^\/v1\/pet/)
    for (const path of used.get('v1-user')!) expect(path).toMatch(/^\/v1\/user/)
    for (const path of used.get('v1-order')!) expect(path).toMatch(/^\/v1\/order/)
    for (const path of used.get('store')!) expect(path).toMatch(/^\/v2\/store\/(inventory|order)\b/)
    for (const path of used.get('v1-event')!) expect(path).toMatch(/^\/v1\/event/)
    for (const path of used.get('v1-webhook')!) expect(path).toMatch(/^\/v1\/webhook_endpoint/)
    for (const path of used.get('v1-request-log')!) expect(path).toMatch(/^\/v1\/request_log/)
    for (const path of used.get('pet')!) expect(path).toMatch(/^\/v2\/(pet|images)\b/)
    for (const path of used.get('user')!) expect(path).toMatch(/^\/v2\/user/)
  })

  it('is a valid OpenAPI 3.1 document (by the structural rules of Redocly)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: '/openapi.json',
      config: await createConfig({ rules: { struct: 'error', 'no-unresolved-refs': 'error' } }),
    })
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
  })

  it('names its server: PUBLIC_URL when set, else the origin it was fetched from', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }])
    const deployed = await createTestApp({ PUBLIC_URL: 'https://pets.example.com/' })
    try {
      const served = (await deployed.app.inject({ method: 'GET', url: '/openapi.json' })).json()
      expect(served.servers).toEqual([{ url: 'https://pets.example.com', description: expect.any(String) }])
    } finally {
      await deployed.close()
    }
  })

  it('answers every v1 object as a named component, the same one wherever it appears', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const schemas = doc.components.schemas as Record<string, unknown>
    for (const name of Object.keys(V1_COMPONENTS)) expect(schemas, name).toHaveProperty([name])
    const refs: string[] = []
    for (const [path, item] of Object.entries<Record<string, OperationDoc>>(doc.paths)) {
      if (!path.startsWith('/v1/')) continue
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, answer] of Object.entries(operation.responses)) {
          const schema = answer.content?.['application/json']?.schema
          if (!status.startsWith('2') || schema === undefined) continue
          expect(schema, `${method} ${path} ${status}`).toEqual({
            $ref: expect.stringMatching(/^#\/components\/schemas\//),
          })
          refs.push(schema.$ref as string)
        }
      }
    }
    expect(new Set(refs)).toEqual(
      new Set(
        [
          'PetV1',
          'PetListV1',
          'DeletedPetV1',
          'UserV1',
          'UserListV1',
          'DeletedUserV1',
          'OrderV1',
          'OrderListV1',
          'DeletedOrderV1',
          'EventV1',
          'EventListV1',
        ]
          .concat(['WebhookEndpoint', 'WebhookEndpointList', 'DeletedWebhookEndpoint', 'WebhookDeliveryList'])
          .concat(['QueuedWebhookDelivery', 'RequestLog', 'RequestLogList'])
          .concat(['QueuedWebhookDelivery', 'AccountV1'])
          .map((name) => `#/components/schemas/${name}`),
      ),
    )
    // Inside a list, the object is the named one too, not a copy.
    expect(doc.components.schemas.PetListV1.properties.data.items).toEqual({
      $ref: '#/components/schemas/PetV1',
    })
    expect(doc.components.schemas.OrderListV1.properties.data.items).toEqual({
      $ref: '#/components/schemas/OrderV1',
    })
    expect(doc.components.schemas.EventListV1.properties.data.items).toEqual({
      $ref: '#/components/schemas/EventV1',
    })
  })

  it('documents the OAuth endpoints with their form parameters and answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const token = doc.paths['/oauth/token'].post
    expect(token.operationId).toBe('oauthToken')
    const form = token.requestBody.content['application/x-www-form-urlencoded'].schema
    expect(form).toEqual({ $ref: '#/components/schemas/OAuthTokenRequest' })
    expect(doc.components.schemas.OAuthTokenRequest.properties.grant_type.enum).toEqual([
      'authorization_code',
      'client_credentials',
      'refresh_token',
    ])
    expect(Object.keys(doc.components.schemas.OAuthTokenRequest.properties)).toEqual(
      expect.arrayContaining([
        'code',
        'redirect_uri',
        'code_verifier',
        'refresh_token',
        'scope',
        'client_id',
      ]),
    )
    expect(token.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/OAuthTokenResponse',
    })
    expect(token.responses['400'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/OAuthError',
    })
    for (const [path, method] of [
      ['/oauth/revoke', 'post'],
      ['/oauth/introspect', 'post'],
      ['/oauth/authorize', 'get'],
      ['/oauth/jwks', 'get'],
      ['/.well-known/oauth-authorization-server', 'get'],
    ] as const) {
      expect(doc.paths[path]?.[method]?.tags, path).toEqual(['oauth'])
    }
    const authorize = doc.paths['/oauth/authorize'].get.parameters.map((p: { name: string }) => p.name)
    expect(authorize).toEqual(
      expect.arrayContaining(['client_id', 'redirect_uri', 'code_challenge', 'state']),
    )
    // Every documented OAuth path is one the service answers.
    const metadata = (
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    ).json()
    for (const endpoint of ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint', 'jwks_uri']) {
      expect(doc.paths, endpoint).toHaveProperty([new URL(metadata[endpoint]).pathname])
    }
  })

  it('serves the interactive reference at /docs from local assets only (no CDN)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    const external = [...page.body.matchAll(/(?:src|href)="(https?:)?\/\//g)]
    expect(external).toEqual([])
    const script = page.body.match(/src="\.?\/?([^"]*swagger-ui-bundle\.js)"/)
    expect(script).not.toBeNull()
  })

  it('documents every error code (docs/errors.md is generated from the registry and up to date)', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
    expect(doc).toBe(renderErrorDocs())
    for (const code of Object.keys(ERRORS)) expect(doc).toContain(`\`${code}\``)
  })

  it('answers the health and readiness probes', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' })
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' })
  })
})
