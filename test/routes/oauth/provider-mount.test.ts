import type { IncomingMessage, ServerResponse } from 'node:http'
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest'
import { basic, createTestApp, type TestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, bearer, clientBasic, newClient, type TestClient } from '../../helpers/oauth.ts'

// Over a real socket rather than app.inject: the provider reads the request stream itself, so
// what matters is that nothing in Fastify has read the body before it.
describeDb('oidc-provider mounted at /oauth', () => {
  let t: TestApp
  let client: TestClient
  let base: string
  let token: string
  const reached: { url: string | undefined; originalUrl: string | undefined }[] = []

  beforeAll(async () => {
    t = await createTestApp()
    client = await newClient(t)
    token = await accessToken(t.app, client)
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    // Every request the provider's callback handles makes a Koa context first.
    const provider = t.app.oauth.provider
    const createContext = provider.createContext.bind(provider)
    vi.spyOn(provider, 'createContext').mockImplementation((req, res) => {
      const raw = req as IncomingMessage & { originalUrl?: string }
      reached.push({ url: raw.url, originalUrl: raw.originalUrl })
      return createContext(req as IncomingMessage, res as ServerResponse)
    })
  })
  beforeEach(() => {
    reached.length = 0
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await t.close()
  })

  it('is not reached by requests outside /oauth, form and JSON bodies there included', async () => {
    const key = { authorization: basic(client.apiKey) }
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    const created = await fetch(`${base}/v1/pet`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Rex&species=dog',
    })
    expect(created.status, await created.clone().text()).toBe(201)
    const { id } = (await created.json()) as { id: number }
    expect((await fetch(`${base}/v1/pet/${id}`, { headers: key })).status).toBe(200)
    const v2 = await fetch(`${base}/v2/pet`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'doggie', photoUrls: [] }),
    })
    expect(v2.status, await v2.clone().text()).toBe(200)
    const { id: v2Id } = (await v2.json()) as { id: number }
    expect((await fetch(`${base}/v2/pet/${v2Id}`, { headers: bearer(token) })).status).toBe(200)
    expect((await fetch(`${base}/oauthx`)).status).toBe(404)
    expect((await fetch(`${base}/oauth/interaction/none/such`)).status).toBe(404)
    expect(reached).toEqual([])
  })

  it('takes a form body at /oauth/token, seeing the path under its mount', async () => {
    const res = await fetch(`${base}/oauth/token?x=1`, {
      method: 'POST',
      headers: {
        authorization: clientBasic(client.clientId, client.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=read%3Apets',
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(await res.json()).toMatchObject({ token_type: 'Bearer', scope: 'read:pets' })
    expect(reached).toEqual([{ url: '/token?x=1', originalUrl: '/oauth/token?x=1' }])
  })

  it('answers at /oauth itself and below it, trailing slash or not', async () => {
    const jwks = await fetch(`${base}/oauth/jwks/`)
    expect(jwks.status).toBe(200)
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0)
    const mount = await fetch(`${base}/oauth`)
    expect(mount.status).toBe(404)
    // /oauth itself is no endpoint: our 404, without the provider.
    expect(mount.headers.get('content-type')).toContain('application/problem+json')
    expect(reached.map((r) => r.url)).toEqual(['/jwks'])
  })
})
