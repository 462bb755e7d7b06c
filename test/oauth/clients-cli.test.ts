import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp } from '../helpers/app.ts'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { accessToken, bearer, tokenRequest } from '../helpers/oauth.ts'

describeDb('admin CLI: pet-service clients', () => {
  let database: TestDatabase
  let env: Record<string, string>
  let app: FastifyInstance

  beforeAll(async () => {
    database = await createTestDatabase()
    env = { DATABASE_URL: database.url }
    app = (await createTestApp({}, { database })).app
  })
  afterAll(async () => {
    await app.close()
    await database.destroy()
  })

  it('creates a client (and its account) with --json; its credentials get a token that works on v2', async () => {
    const res = await runPetService(
      [
        'clients',
        'create',
        '--account',
        'Cli@Example.com',
        '--scope',
        'read:pets write:pets',
        '--name',
        'ci',
        '--json',
      ],
      env,
    )
    expect(res.code, res.stderr).toBe(0)
    const out = JSON.parse(res.stdout)
    expect(out.client_id).toMatch(/^pet_ci_/)
    expect(out.client_secret).toMatch(/^pet_cs_/)
    expect(out).toMatchObject({ name: 'ci', scopes: ['read:pets', 'write:pets'], email: 'cli@example.com' })
    const client = { clientId: out.client_id, clientSecret: out.client_secret }
    const token = await accessToken(app, client)
    const created = await app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(token),
      payload: { name: 'from-cli', photoUrls: [] },
    })
    expect(created.statusCode).toBe(200)

    const list = await runPetService(['clients', 'list', '--account', 'cli@example.com', '--json'], env)
    expect(list.code).toBe(0)
    const clients = JSON.parse(list.stdout)
    expect(clients.map((c: { client_id: string }) => c.client_id)).toEqual([out.client_id])
    expect(list.stdout).not.toContain(out.client_secret)
    const all = await runPetService(['clients', 'list'], env)
    expect(all.code, all.stderr).toBe(0)
    expect(all.stdout).toContain(out.client_id)

    const deleted = await runPetService(['clients', 'delete', out.client_id], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    const again = await tokenRequest(app, client, { grant_type: 'client_credentials' })
    expect(again.statusCode).toBe(401)
    expect(again.json().error).toBe('invalid_client')
    await app.oauth.revocations.poll()
    const call = await app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(token) })
    expect(call.statusCode).toBe(401)
  }, 90_000)

  it('registers redirect URIs and refuses unknown scopes and unsafe redirect URIs', async () => {
    const ok = await runPetService(
      [
        'clients',
        'create',
        '--account',
        'web@example.com',
        '--redirect-uri',
        'https://app.example.com/cb',
        '--json',
      ],
      env,
    )
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({
      redirect_uris: ['https://app.example.com/cb'],
      grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
      scopes: [
        'read:pets',
        'write:pets',
        'read:users',
        'write:users',
        'read:orders',
        'write:orders',
        'read:events',
        'read:webhooks',
        'write:webhooks',
        'read:request_logs',
      ],
    })
    const badScope = await runPetService(
      ['clients', 'create', '--account', 'web@example.com', '--scope', 'admin'],
      env,
    )
    expect(badScope.code).toBe(2)
    expect(badScope.stderr).toContain('admin')
    const badUri = await runPetService(
      ['clients', 'create', '--account', 'web@example.com', '--redirect-uri', 'http://app.example.com/cb'],
      env,
    )
    expect(badUri.code).toBe(2)
    expect(badUri.stderr).toContain('https')
  }, 90_000)
})
