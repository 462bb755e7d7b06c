import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { newClient, type TestClient } from '../helpers/oauth.ts'

/**
 * The service's /openapi.json is good enough for an SDK generator: @hey-api/openapi-ts, pointed at
 * a running instance, writes a TypeScript client that type-checks strictly, and its v1, OAuth and
 * v2 operations work against that instance. SQLite only: the generator sees the same document on
 * either dialect.
 */

/** What the test calls of the generated SDK (it is written at run time, so typed here by hand). */
interface Result<T> {
  data?: T
  error?: unknown
  response: Response
}
type Operation = (options: Record<string, unknown>) => Promise<Result<Record<string, unknown>>>
interface GeneratedClient {
  client: { setConfig(config: { baseUrl: string }): void }
}
interface GeneratedSdk {
  createPet: Operation
  getPet: Operation
  oauthToken: Operation
  addPet: Operation
  getPetById: Operation
}

const ROOT = new URL('../../', import.meta.url)

/**
 * The SDK's `auth` callback: asked once per security scheme an operation lists, it answers for the
 * one scheme we mean (the SDK writes `Basic base64(value)` or `Bearer value`).
 */
const only = (scheme: 'basic' | 'bearer', value: string) => (auth: { scheme?: string }) =>
  auth.scheme === scheme ? value : undefined

describeDb('an SDK generated from /openapi.json (@hey-api/openapi-ts)', () => {
  let live: LiveServer
  let out: string
  let client: TestClient

  beforeAll(async () => {
    live = await startLiveServer()
    client = await newClient(live, { scopes: ['read:pets', 'write:pets'] })
    out = mkdtempSync(join(tmpdir(), 'pet-service-sdk-'))
    await createClient({
      input: `${live.url}/openapi.json`,
      output: { path: out },
      plugins: ['@hey-api/client-fetch', '@hey-api/sdk', '@hey-api/typescript'],
      logs: { level: 'silent' },
    })
  }, 120_000)
  afterAll(async () => {
    await live?.close()
    if (out !== undefined) rmSync(out, { recursive: true, force: true })
  })

  it('type-checks strictly, with a named type for every v1 object', () => {
    const types = readFileSync(join(out, 'types.gen.ts'), 'utf8')
    for (const name of [
      'PetV1',
      'PetListV1',
      'UserV1',
      'EventV1',
      'WebhookEndpoint',
      'Pet',
      'OAuthTokenResponse',
    ]) {
      expect(types, name).toContain(`export type ${name} = {`)
    }
    writeFileSync(
      join(out, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022', 'dom', 'dom.iterable'],
          skipLibCheck: true,
          types: [],
        },
        include: ['**/*.ts'],
      }),
    )
    const tsc = spawnSync(
      process.execPath,
      [new URL('node_modules/typescript/bin/tsc', ROOT).pathname, '-p', join(out, 'tsconfig.json')],
      { encoding: 'utf8' },
    )
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('')
    expect(tsc.status).toBe(0)
  }, 120_000)

  it('calls a v1 operation, the token endpoint and v2 operations', async () => {
    const sdk = (await import(pathToFileURL(join(out, 'sdk.gen.ts')).href)) as GeneratedSdk
    const { client: http } = (await import(pathToFileURL(join(out, 'client.gen.ts')).href)) as GeneratedClient
    http.setConfig({ baseUrl: live.url })

    const created = await sdk.createPet({
      body: { name: 'Rex', species: 'dog' },
      auth: only('basic', `${client.apiKey}:`),
    })
    expect(created.response.status).toBe(201)
    expect(created.data).toMatchObject({ object: 'pet', name: 'Rex', species: 'dog' })
    const read = await sdk.getPet({
      path: { id: created.data?.id },
      auth: only('basic', `${client.apiKey}:`),
    })
    expect(read.data).toEqual(created.data)

    const token = await sdk.oauthToken({
      body: { grant_type: 'client_credentials', scope: 'read:pets write:pets' },
      auth: only('basic', `${client.clientId}:${client.clientSecret}`),
    })
    expect(token.response.status, JSON.stringify(token.error)).toBe(200)
    const accessToken = String(token.data?.access_token)

    const added = await sdk.addPet({
      body: { name: 'doggie', photoUrls: [] },
      auth: only('bearer', accessToken),
    })
    expect(added.response.status).toBe(200)
    const got = await sdk.getPetById({ path: { petId: added.data?.id }, auth: only('bearer', accessToken) })
    expect(got.response.status).toBe(200)
    expect(got.data).toEqual({ id: added.data?.id, name: 'doggie', photoUrls: [] })

    const refused = await sdk.getPetById({
      path: { petId: added.data?.id },
      auth: only('bearer', 'not-a-token'),
    })
    expect(refused.response.status).toBe(401)
    expect(refused.error).toMatchObject({ code: 'token_invalid' })
  }, 120_000)
})
