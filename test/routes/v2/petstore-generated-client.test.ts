import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ALL_SCOPES } from '../../../src/access/scopes.ts'
import { createTestApp, type TestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, newClient, type TestClient } from '../../helpers/oauth.ts'

/** The official Petstore v2 document, as published (test/fixtures/README.md). */
const OFFICIAL_DOCUMENT = new URL('../../fixtures/petstore-v2-swagger.json', import.meta.url)

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1b5f7d30000000049454e44ae426082',
  'hex',
)

/** What a @hey-api fetch client's operation answers (its `throwOnError` left off). */
interface Answer<T = unknown> {
  data?: T
  error?: unknown
  response: Response
}
type Operation = (options?: Record<string, unknown>) => Promise<Answer>
/** The official document's 20 operations, as the generated `sdk.gen.ts` exports them. */
type OperationId =
  | 'addPet'
  | 'updatePet'
  | 'findPetsByStatus'
  | 'findPetsByTags'
  | 'getPetById'
  | 'updatePetWithForm'
  | 'deletePet'
  | 'uploadFile'
  | 'getInventory'
  | 'placeOrder'
  | 'getOrderById'
  | 'deleteOrder'
  | 'createUser'
  | 'createUsersWithArrayInput'
  | 'createUsersWithListInput'
  | 'loginUser'
  | 'logoutUser'
  | 'getUserByName'
  | 'updateUser'
  | 'deleteUser'
type Sdk = Record<OperationId, Operation>

interface PetstorePet {
  id: number
  name: string
  photoUrls: string[]
  category?: { id?: number; name?: string }
  tags?: { id?: number; name?: string }[]
  status?: string
}

/**
 * A client generated at test time, by a generator from npm (@hey-api/openapi-ts, fetch client),
 * from the official Petstore document, untouched: the methods a team would get from it run a
 * whole Petstore scenario against /v2. The only configuration is what the generated client
 * offers for it: the base URL, the token for the operations that declare `petstore_auth`, the
 * API key for `api_key`, and, for the operations that declare no security (`/user`,
 * `/store/order`), the token as a default header (docs/petstore-differences.md, "Sending the token").
 */
describeDb('a Petstore client generated from the official document', () => {
  let t: TestApp
  let client: TestClient
  let sdk: Sdk
  let outDir: string
  let baseUrl: string

  beforeAll(async () => {
    t = await createTestApp()
    client = await newClient(t, { scopes: ALL_SCOPES })
    const token = await accessToken(t.app, client, ALL_SCOPES.join(' '))
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v2`
    outDir = mkdtempSync(join(tmpdir(), 'petstore-client-'))
    await createClient({
      input: OFFICIAL_DOCUMENT.pathname,
      output: outDir,
      logs: { level: 'silent' },
    })
    sdk = (await import(pathToFileURL(join(outDir, 'index.ts')).href)) as Sdk
    const clientModule = (await import(pathToFileURL(join(outDir, 'client.gen.ts')).href)) as {
      client: { setConfig(config: Record<string, unknown>): void }
    }
    clientModule.client.setConfig({
      baseUrl,
      // Called for each operation's declared scheme: the bearer for petstore_auth, the key for api_key.
      auth: (scheme: { type: string }) => (scheme.type === 'apiKey' ? client.apiKey : token),
      headers: { Authorization: `Bearer ${token}` },
    })
  }, 120_000)
  afterAll(async () => {
    await t.close()
    if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true })
  })

  async function ok<T>(answer: Promise<Answer>): Promise<T> {
    const { response, data, error } = await answer
    expect(response.status, `${response.url}: ${JSON.stringify(error)}`).toBe(200)
    return data as T
  }

  it('runs the pet scenario with ids of its own choosing, twice over (a suite run again)', async () => {
    const petId = 7_000_000 + Math.floor(Math.random() * 1_000_000)
    for (let run = 1; run <= 2; run++) {
      const sent: PetstorePet = {
        id: petId,
        name: `doggie ${run}`,
        photoUrls: ['https://example.com/doggie.jpg'],
        category: { id: 1, name: 'Dogs' },
        tags: [{ id: 1, name: `friendly-${petId}` }],
        status: 'available',
      }
      await ok(sdk.addPet({ body: sent }))
      expect(await ok(sdk.getPetById({ path: { petId } }))).toEqual(sent)

      const changed = { ...sent, name: `renamed ${run}`, status: 'pending' }
      await ok(sdk.updatePet({ body: changed }))
      expect(await ok(sdk.getPetById({ path: { petId } }))).toEqual(changed)

      const pending = await ok<PetstorePet[]>(sdk.findPetsByStatus({ query: { status: ['pending'] } }))
      expect(pending.map((p) => p.id)).toContain(petId)
      const tagged = await ok<PetstorePet[]>(sdk.findPetsByTags({ query: { tags: [`friendly-${petId}`] } }))
      expect(tagged).toEqual([changed])

      await ok(sdk.updatePetWithForm({ path: { petId }, body: { name: 'Rex', status: 'sold' } }))
      expect(await ok(sdk.getPetById({ path: { petId } }))).toMatchObject({ name: 'Rex', status: 'sold' })

      const upload = await ok<{ code: number; message: string }>(
        sdk.uploadFile({
          path: { petId },
          body: { additionalMetadata: 'front view', file: new File([PNG], 'rex.png', { type: 'image/png' }) },
        }),
      )
      expect(upload.message).toContain('rex.png')
      expect(upload.message).toContain(`${PNG.length} bytes`)
      const withPhoto = await ok<PetstorePet>(sdk.getPetById({ path: { petId } }))
      expect(withPhoto.photoUrls).toHaveLength(2)

      await ok(sdk.deletePet({ path: { petId } }))
      expect((await sdk.getPetById({ path: { petId } })).response.status).toBe(404)
    }
  })

  it('runs the user scenario by username: create, log in and out, read, update, delete', async () => {
    const username = `user${Math.floor(Math.random() * 1_000_000)}`
    const password = 'correct horse battery staple'
    const user = {
      id: 10,
      username,
      firstName: 'Alice',
      lastName: 'Liddell',
      email: `${username}@example.com`,
      password,
      phone: '+44 20 7946 0000',
      userStatus: 1,
    }
    await ok(sdk.createUser({ body: user }))

    const login = await sdk.loginUser({ query: { username, password } })
    expect(login.response.status).toBe(200)
    expect(typeof login.data).toBe('string')
    expect(Number(login.response.headers.get('x-rate-limit'))).toBeGreaterThan(0)
    expect(Date.parse(login.response.headers.get('x-expires-after') ?? '')).toBeGreaterThan(Date.now())
    const wrong = await sdk.loginUser({ query: { username, password: 'not the password' } })
    expect(wrong.response.status).toBe(400)

    const read = await ok<Record<string, unknown>>(sdk.getUserByName({ path: { username } }))
    expect(read).toMatchObject({ username, firstName: 'Alice', lastName: 'Liddell', email: user.email })
    expect(read).not.toHaveProperty('password', password)

    await ok(sdk.updateUser({ path: { username }, body: { ...user, lastName: 'Hargreaves' } }))
    expect(await ok(sdk.getUserByName({ path: { username } }))).toMatchObject({ lastName: 'Hargreaves' })

    const batch = [1, 2].map((n) => ({ ...user, id: 20 + n, username: `${username}-${n}` }))
    await ok(sdk.createUsersWithArrayInput({ body: batch }))
    await ok(sdk.createUsersWithListInput({ body: [{ ...user, id: 30, username: `${username}-3` }] }))
    for (const name of [`${username}-1`, `${username}-2`, `${username}-3`]) {
      await ok(sdk.getUserByName({ path: { username: name } }))
    }

    await ok(sdk.logoutUser())
    await ok(sdk.deleteUser({ path: { username } }))
    expect((await sdk.getUserByName({ path: { username } })).response.status).toBe(404)
  })

  it('runs the store scenario: place an order for a pet, read it, delete it', async () => {
    const petId = 8_000_000 + Math.floor(Math.random() * 1_000_000)
    await ok(sdk.addPet({ body: { id: petId, name: 'Orderable', photoUrls: [] } }))
    const orderId = 5
    const order = {
      id: orderId,
      petId,
      quantity: 2,
      shipDate: '2026-12-01T10:00:00.000Z',
      status: 'placed',
      complete: false,
    }
    expect(await ok(sdk.placeOrder({ body: order }))).toEqual(order)
    expect(await ok(sdk.getOrderById({ path: { orderId } }))).toEqual(order)
    const inventory = await ok<Record<string, number>>(sdk.getInventory())
    expect(inventory.available).toBeGreaterThanOrEqual(1)
    await ok(sdk.deleteOrder({ path: { orderId } }))
    expect((await sdk.getOrderById({ path: { orderId } })).response.status).toBe(404)
  })

  it('answers the operations the document leaves without security, sent without a token, with a 401 that says to set it as a default header', async () => {
    for (const path of ['/user/anyone', '/store/order/1']) {
      const response = await fetch(`${baseUrl}${path}`)
      expect(response.status, path).toBe(401)
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(((await response.json()) as { detail: string }).detail).toMatch(
        /Authorization: Bearer <token> as a default header/,
      )
    }
  })
})
