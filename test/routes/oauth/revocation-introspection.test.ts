import type { FastifyInstance } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { createTestApp, useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import {
  accessToken,
  bearer,
  clientBasic,
  formBody,
  newClient,
  type TestClient,
} from '../../helpers/oauth.ts'
import { pollUntil } from '../../helpers/poll.ts'

async function post(app: FastifyInstance, path: string, client: TestClient, fields: Record<string, string>) {
  const body = formBody(fields)
  return app.inject({
    method: 'POST',
    url: path,
    payload: body.payload,
    headers: { ...body.headers, authorization: clientBasic(client.clientId, client.clientSecret) },
  })
}

describeDb('OAuth revocation (RFC 7009) and introspection (RFC 7662)', () => {
  let client: TestClient
  let other: TestClient

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t, { scopes: ['read:pets', 'write:pets'] })
    other = await newClient(t)
  })

  it('introspects an active access token of the calling client', async () => {
    const token = await accessToken(t.app, client, 'read:pets')
    const res = await post(t.app, '/oauth/introspect', client, { token })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toContain('no-store')
    expect(res.json()).toMatchObject({
      active: true,
      client_id: client.clientId,
      scope: 'read:pets',
      token_type: 'Bearer',
      iss: 'http://localhost:8080',
      account_id: client.accountId,
    })
    expect(res.json().exp).toBeGreaterThan(Date.now() / 1000)
  })

  it('answers active:false for garbage, and for another client’s token', async () => {
    for (const token of ['nonsense', 'a.b.c']) {
      const res = await post(t.app, '/oauth/introspect', client, { token })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ active: false })
    }
    const theirs = await accessToken(t.app, other)
    expect((await post(t.app, '/oauth/introspect', client, { token: theirs })).json()).toEqual({
      active: false,
    })
  })

  it('requires client authentication: 401 invalid_client', async () => {
    const token = await accessToken(t.app, client)
    const res = await post(t.app, '/oauth/introspect', { ...client, clientSecret: 'wrong' }, { token })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
    const revoke = await post(t.app, '/oauth/revoke', { ...client, clientSecret: 'wrong' }, { token })
    expect(revoke.statusCode).toBe(401)
    expect(revoke.json().error).toBe('invalid_client')
  })

  it('revokes an access token: refused on v2 at once, inactive on introspection', async () => {
    const token = await accessToken(t.app, client)
    expect(
      (await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })).statusCode,
    ).toBe(200)
    const res = await post(t.app, '/oauth/revoke', client, { token, token_type_hint: 'access_token' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    const call = await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })
    expect(call.statusCode).toBe(401)
    expect(call.headers['www-authenticate']).toContain('error="invalid_token"')
    expect(call.json().code).toBe('token_invalid')
    expect((await post(t.app, '/oauth/introspect', client, { token })).json()).toEqual({ active: false })
  })

  it('answers 200 and changes nothing when a client revokes another client’s token or garbage', async () => {
    const theirs = await accessToken(t.app, other)
    expect((await post(t.app, '/oauth/revoke', client, { token: theirs })).statusCode).toBe(200)
    expect((await post(t.app, '/oauth/revoke', client, { token: 'garbage' })).statusCode).toBe(200)
    expect(
      (await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(theirs) })).statusCode,
    ).toBe(200)
  })

  it('refuses a token revoked on another instance within 5 seconds', async () => {
    const second = (await createTestApp({}, { database: t.database })).app
    try {
      const token = await accessToken(t.app, client)
      const call = () => second.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })
      expect((await call()).statusCode).toBe(200)
      expect((await post(t.app, '/oauth/revoke', client, { token })).statusCode).toBe(200)
      let status = 200
      await pollUntil(
        async () => {
          status = (await call()).statusCode
          return status !== 200
        },
        5_000,
        250,
      )
      expect(status).toBe(401)
    } finally {
      await second.close()
    }
  })
})
