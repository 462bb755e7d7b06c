import type { AddressInfo } from 'node:net'
import SwaggerClient from 'swagger-client'
import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, newClient, type TestClient } from '../../helpers/oauth.ts'
import { answersOf, type Execute, type SwaggerAnswer } from '../../helpers/swagger-client.ts'

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1b5f7d30000000049454e44ae426082',
  'hex',
)

/**
 * Every v2 operation driven through swagger-client, built from the service's own /openapi.json
 * over real HTTP: the published document (paths, parameters, bodies, security schemes) and the
 * behaviour cannot drift apart.
 */
describeDb('v2 through swagger-client built from /openapi.json', () => {
  let client: TestClient
  let execute: Execute
  let keyOnly: Execute
  let spec: { paths: Record<string, Record<string, { operationId?: string }>> }

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    const token = await accessToken(t.app, client)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const url = `http://127.0.0.1:${port}/openapi.json`
    const swagger = await SwaggerClient({
      url,
      authorizations: { petstore_auth: { token: { access_token: token } } },
    })
    spec = swagger.spec
    execute = answersOf(swagger)
    const withKey = await SwaggerClient({ url, authorizations: { api_key: client.apiKey } })
    keyOnly = answersOf(withKey)
  })

  it('exercises every v2 operation the document declares', async () => {
    const v2Operations = Object.entries(spec.paths)
      .filter(([path]) => path.startsWith('/v2/'))
      .flatMap(([, methods]) => Object.values(methods).map((op) => op.operationId))
      .sort()
    const exercised = new Set<string>()
    const run = async (request: Record<string, unknown>, via: Execute = execute) => {
      exercised.add(request.operationId as string)
      return via(request)
    }

    const sent = { name: 'doggie', photoUrls: [], tags: [{ id: 1, name: 'good' }], status: 'available' }
    const added = await run({ operationId: 'addPet', requestBody: sent })
    expect(added.status).toBe(200)
    const pet = added.body as { id: number }
    expect(pet).toEqual({ id: pet.id, ...sent })

    const got = await run({ operationId: 'getPetById', parameters: { petId: pet.id } })
    expect(got.body).toEqual(pet)
    expect((await keyOnly({ operationId: 'getPetById', parameters: { petId: pet.id } })).body).toEqual(pet)

    const replaced = {
      id: pet.id,
      name: 'renamed',
      photoUrls: ['https://example.com/1.jpg'],
      status: 'pending',
    }
    const updated = await run({ operationId: 'updatePet', requestBody: replaced })
    expect(updated.status).toBe(200)
    expect(updated.body).toEqual(replaced)
    const notFound = await execute({ operationId: 'updatePet', requestBody: { ...replaced, id: 424242 } })
    expect(notFound.status).toBe(404)
    const invalid = await execute({ operationId: 'updatePet', requestBody: { id: pet.id, name: '' } })
    expect(invalid.status).toBe(422)

    const formed = await run({
      operationId: 'updatePetWithForm',
      parameters: { petId: pet.id },
      requestBody: { name: 'formed', status: 'available' },
    })
    expect(formed.status).toBe(200)
    expect(formed.body).toMatchObject({ name: 'formed', status: 'available' })

    const byStatus = await run({
      operationId: 'findPetsByStatus',
      parameters: { status: ['available', 'sold'] },
    })
    expect((byStatus.body as { id: number }[]).map((p) => p.id)).toEqual([pet.id])
    await run({
      operationId: 'addPet',
      requestBody: { name: 'tagged', photoUrls: [], tags: [{ name: 'tiny' }] },
    })
    const byTags = await run({ operationId: 'findPetsByTags', parameters: { tags: ['tiny'] } })
    expect((byTags.body as { name: string }[]).map((p) => p.name)).toEqual(['tagged'])

    const uploaded = await run({
      operationId: 'uploadFile',
      parameters: { petId: pet.id },
      requestBody: { additionalMetadata: 'side', file: new Blob([PNG], { type: 'image/png' }) },
    })
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200)
    expect(uploaded.body).toMatchObject({ code: 200, type: 'unknown' })
    const withPhoto = (await execute({ operationId: 'getPetById', parameters: { petId: pet.id } })).body as {
      photoUrls: string[]
    }
    const imageName = withPhoto.photoUrls.at(-1)?.split('/').at(-1)
    const image = await run({ operationId: 'getPetImage', parameters: { name: imageName } })
    expect(image.status).toBe(200)

    const inventory = await run({ operationId: 'getInventory' })
    // 'tagged' was sent without a status: v2 shows none, the domain (and the inventory) keeps `available`.
    expect(inventory.body).toEqual({ available: 2, pending: 0, sold: 0 })
    expect((await keyOnly({ operationId: 'getInventory' })).status).toBe(200)

    const order = {
      id: 12,
      petId: pet.id,
      quantity: 2,
      shipDate: '2026-12-24T18:00:00Z',
      status: 'placed',
      complete: false,
    }
    const placed = await run({ operationId: 'placeOrder', requestBody: order })
    expect([placed.status, placed.body]).toEqual([200, order])
    expect((await run({ operationId: 'getOrderById', parameters: { orderId: 12 } })).body).toEqual(order)
    const badOrder = await execute({ operationId: 'placeOrder', requestBody: { ...order, petId: 987654 } })
    expect([badOrder.status, (badOrder.body as { title: string }).title]).toEqual([400, 'Invalid Order'])
    expect((await run({ operationId: 'deleteOrder', parameters: { orderId: 12 } })).status).toBe(200)
    expect((await execute({ operationId: 'getOrderById', parameters: { orderId: 12 } })).status).toBe(404)

    const user = {
      username: 'jdoe',
      firstName: 'Jane',
      lastName: 'Doe',
      email: 'j@example.com',
      userStatus: 1,
    }
    const createdUser = await run({ operationId: 'createUserV2', requestBody: { ...user, password: 'pw' } })
    expect(createdUser.status).toBe(200)
    const userId = (createdUser.body as { id: number }).id
    expect(createdUser.body).toEqual({ id: userId, ...user })
    expect((await run({ operationId: 'getUserByName', parameters: { username: 'jdoe' } })).body).toEqual({
      id: userId,
      ...user,
    })
    const updatedUser = await run({
      operationId: 'updateUserV2',
      parameters: { username: 'jdoe' },
      requestBody: { ...user, firstName: 'Janet' },
    })
    expect(updatedUser.body).toEqual({ id: userId, ...user, firstName: 'Janet' })
    const login = await run({ operationId: 'loginUser', parameters: { username: 'jdoe', password: 'pw' } })
    expect(login.body).toMatch(/^logged in user session:/)
    expect(Number(login.headers['x-rate-limit'])).toBeGreaterThan(0)
    expect((await run({ operationId: 'logoutUser' })).status).toBe(200)
    for (const operationId of ['createUsersWithArrayInput', 'createUsersWithListInput']) {
      const batch = await run({
        operationId,
        requestBody: [{ username: `${operationId}-1` }, { username: `${operationId}-2` }],
      })
      expect((batch.body as { username: string }[]).map((u) => u.username)).toEqual([
        `${operationId}-1`,
        `${operationId}-2`,
      ])
    }
    expect((await run({ operationId: 'deleteUserV2', parameters: { username: 'jdoe' } })).status).toBe(200)

    const deleted = await run({ operationId: 'deletePet', parameters: { petId: pet.id } })
    expect(deleted.status).toBe(200)
    expect((await execute({ operationId: 'getPetById', parameters: { petId: pet.id } })).status).toBe(404)

    expect([...exercised].sort()).toEqual(v2Operations)
  })

  it('gets 401 with a Bearer challenge when no credential is configured', async () => {
    const { port } = t.app.server.address() as AddressInfo
    const anonymous = await SwaggerClient({ url: `http://127.0.0.1:${port}/openapi.json`, spec })
    try {
      await anonymous.execute({ operationId: 'getInventory' })
      expect.unreachable()
    } catch (error) {
      const response = (error as { response: SwaggerAnswer }).response
      expect(response.status).toBe(401)
      expect(response.headers['www-authenticate']).toBe('Bearer')
    }
  })
})
