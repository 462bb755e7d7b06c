import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import SwaggerClient from 'swagger-client'
import { beforeAll, expect, it } from 'vitest'
import { ALL_SCOPES } from '../../../src/access/scopes.ts'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, newClient, type TestClient } from '../../helpers/oauth.ts'
import { answersOf, type Execute } from '../../helpers/swagger-client.ts'

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1b5f7d30000000049454e44ae426082',
  'hex',
)

interface SwaggerDocument {
  host: string
  basePath: string
  schemes: string[]
  paths: Record<string, Record<string, { operationId: string }>>
}

/** The official Petstore v2 document, as published (test/fixtures/README.md). */
function officialDocument(): SwaggerDocument {
  return JSON.parse(
    readFileSync(new URL('../../fixtures/petstore-v2-swagger.json', import.meta.url), 'utf8'),
  ) as SwaggerDocument
}

/**
 * `swagger-client` given the official Petstore document and nothing of ours but where the service
 * is: every one of the document's 20 operations answers what the document promises. The
 * operations that declare no security (`/user`, `/store/order`) get the token as a default header,
 * which is how a client sends it (docs/petstore-differences.md, "Sending the token").
 */
describeDb('the official Petstore document, driven by swagger-client', () => {
  let client: TestClient
  let execute: Execute
  let document: SwaggerDocument

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t, { scopes: ALL_SCOPES })
    const token = await accessToken(t.app, client, ALL_SCOPES.join(' '))
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    document = officialDocument()
    const spec = { ...document, host: `127.0.0.1:${port}`, basePath: '/v2', schemes: ['http'] }
    const swagger = await SwaggerClient({
      spec,
      authorizations: { petstore_auth: { token: { access_token: token } }, api_key: client.apiKey },
      requestInterceptor: (request: { headers: Record<string, string> }) => {
        // The default header, for the operations the document leaves without security; the
        // others already carry their declared credential (header names in any case).
        const names = Object.keys(request.headers).map((name) => name.toLowerCase())
        if (!names.includes('authorization') && !names.includes('api_key')) {
          request.headers.Authorization = `Bearer ${token}`
        }
        return request
      },
    })
    execute = answersOf(swagger)
  })

  it('performs every one of its 20 operations and gets what it promises', async () => {
    const declared = Object.values(document.paths)
      .flatMap((methods) => Object.values(methods).map((op) => op.operationId))
      .sort()
    expect(declared).toHaveLength(20)
    const performed = new Set<string>()
    const run = async (request: Record<string, unknown>) => {
      performed.add(request.operationId as string)
      return execute(request)
    }

    // Pets, by an id the client chooses.
    const petId = 31_415
    const pet = {
      id: petId,
      category: { id: 1, name: 'Dogs' },
      name: 'doggie',
      photoUrls: ['https://example.com/doggie.jpg'],
      tags: [{ id: 1, name: 'friendly' }],
      status: 'available',
    }
    expect((await run({ operationId: 'addPet', parameters: { body: pet } })).status).toBe(200)
    const got = await run({ operationId: 'getPetById', parameters: { petId } })
    expect(got.status).toBe(200)
    expect(got.body).toEqual(pet)
    // Posting the same id again replaces the pet (a suite run twice).
    expect(
      (await run({ operationId: 'addPet', parameters: { body: { ...pet, name: 'again' } } })).status,
    ).toBe(200)
    expect((await execute({ operationId: 'getPetById', parameters: { petId } })).body).toMatchObject({
      name: 'again',
    })

    const updated = { ...pet, name: 'renamed', status: 'pending' }
    expect((await run({ operationId: 'updatePet', parameters: { body: updated } })).status).toBe(200)
    expect(
      (await run({ operationId: 'updatePet', parameters: { body: { ...updated, id: 'x' } } })).status,
    ).toBe(400)
    expect(
      (await execute({ operationId: 'updatePet', parameters: { body: { ...updated, id: 27_182 } } })).status,
    ).toBe(404)

    const byStatus = await run({ operationId: 'findPetsByStatus', parameters: { status: ['pending'] } })
    expect(byStatus.status).toBe(200)
    expect(byStatus.body).toEqual([updated])
    expect(
      (await execute({ operationId: 'findPetsByStatus', parameters: { status: ['lost'] } })).status,
    ).toBe(400)
    const byTags = await run({ operationId: 'findPetsByTags', parameters: { tags: ['friendly'] } })
    expect(byTags.body).toEqual([updated])

    const formed = await run({
      operationId: 'updatePetWithForm',
      parameters: { petId, name: 'formed', status: 'available' },
    })
    expect(formed.status).toBe(200)
    expect((await execute({ operationId: 'getPetById', parameters: { petId } })).body).toMatchObject({
      name: 'formed',
      status: 'available',
    })

    const uploaded = await run({
      operationId: 'uploadFile',
      parameters: {
        petId,
        additionalMetadata: 'side view',
        file: new File([PNG], 'side.png', { type: 'image/png' }),
      },
    })
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200)
    expect(uploaded.body).toMatchObject({ code: 200, type: 'unknown' })
    expect((uploaded.body as { message: string }).message).toContain('side.png')

    const inventory = await run({ operationId: 'getInventory' })
    expect(inventory.status).toBe(200)
    expect(inventory.body).toMatchObject({ available: 1 })

    // Store orders, for a pet of the account.
    const order = {
      id: 3,
      petId,
      quantity: 1,
      shipDate: '2026-12-24T09:00:00.000Z',
      status: 'placed',
      complete: false,
    }
    const placed = await run({ operationId: 'placeOrder', parameters: { body: order } })
    expect(placed.status).toBe(200)
    expect(placed.body).toEqual(order)
    expect(
      (await execute({ operationId: 'placeOrder', parameters: { body: { ...order, id: 4, petId: 27_182 } } }))
        .status,
    ).toBe(400)
    const gotOrder = await run({ operationId: 'getOrderById', parameters: { orderId: 3 } })
    expect(gotOrder.body).toEqual(order)
    expect((await execute({ operationId: 'getOrderById', parameters: { orderId: 99 } })).status).toBe(404)
    expect((await run({ operationId: 'deleteOrder', parameters: { orderId: 3 } })).status).toBe(200)
    expect((await execute({ operationId: 'deleteOrder', parameters: { orderId: 3 } })).status).toBe(404)

    // Users, by username.
    const user = {
      id: 1,
      username: 'jdoe',
      firstName: 'Jane',
      lastName: 'Doe',
      email: 'jdoe@example.com',
      password: 'correct horse battery staple',
      phone: '555-0100',
      userStatus: 1,
    }
    const { password, ...shown } = user
    expect((await run({ operationId: 'createUser', parameters: { body: user } })).status).toBe(200)
    const gotUser = await run({ operationId: 'getUserByName', parameters: { username: 'jdoe' } })
    expect(gotUser.body).toMatchObject(shown)
    expect(gotUser.body).not.toHaveProperty('password', password)
    expect((await execute({ operationId: 'getUserByName', parameters: { username: 'nobody' } })).status).toBe(
      404,
    )

    const login = await run({ operationId: 'loginUser', parameters: { username: 'jdoe', password } })
    expect(login.status).toBe(200)
    expect(login.headers['x-rate-limit']).toMatch(/^\d+$/)
    expect(Date.parse(login.headers['x-expires-after'] ?? '')).toBeGreaterThan(Date.now())
    const refused = await execute({
      operationId: 'loginUser',
      parameters: { username: 'jdoe', password: 'nope' },
    })
    expect(refused.status).toBe(400)
    expect((await run({ operationId: 'logoutUser' })).status).toBe(200)

    expect(
      (
        await run({
          operationId: 'updateUser',
          parameters: { username: 'jdoe', body: { ...user, lastName: 'Roe' } },
        })
      ).status,
    ).toBe(200)
    expect(
      (await execute({ operationId: 'getUserByName', parameters: { username: 'jdoe' } })).body,
    ).toMatchObject({
      lastName: 'Roe',
    })

    const twins = [
      { ...user, id: 2, username: 'twin1' },
      { ...user, id: 3, username: 'twin2' },
    ]
    expect(
      (await run({ operationId: 'createUsersWithArrayInput', parameters: { body: twins } })).status,
    ).toBe(200)
    expect(
      (
        await run({
          operationId: 'createUsersWithListInput',
          parameters: { body: [{ ...user, id: 4, username: 'solo' }] },
        })
      ).status,
    ).toBe(200)
    for (const username of ['twin1', 'twin2', 'solo']) {
      expect((await execute({ operationId: 'getUserByName', parameters: { username } })).status).toBe(200)
    }

    expect((await run({ operationId: 'deleteUser', parameters: { username: 'jdoe' } })).status).toBe(200)
    expect((await execute({ operationId: 'deleteUser', parameters: { username: 'jdoe' } })).status).toBe(404)

    expect((await run({ operationId: 'deletePet', parameters: { petId } })).status).toBe(200)
    expect((await execute({ operationId: 'getPetById', parameters: { petId } })).status).toBe(404)

    expect([...performed].sort()).toEqual(declared)
  })
})
