import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import SwaggerClient from 'swagger-client'
import { beforeAll, expect, it } from 'vitest'
import { useTestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { accessToken, newClient } from '../../helpers/oauth.ts'
import { answersOf } from '../../helpers/swagger-client.ts'

/** The official Petstore document (test/fixtures/README.md says where it comes from). */
const PETSTORE = JSON.parse(
  readFileSync(new URL('../../fixtures/petstore-v2-swagger.json', import.meta.url), 'utf8'),
) as Record<string, unknown>

/**
 * A client built from the official Petstore document, as a generator builds one: it declares no
 * security on /user, so the client sends the token only as a default header
 * (docs/petstore-differences.md, "Sending the token").
 */
describeDb('the /user operations through a client of the official Petstore document', () => {
  let token: string
  let host: string

  const client = async (headers: Record<string, string>) => {
    const swagger = await SwaggerClient({
      spec: { ...PETSTORE, host, schemes: ['http'] },
      requestInterceptor: (request) => {
        Object.assign(request.headers, headers)
        return request
      },
    })
    return answersOf(swagger)
  }

  const t = useTestApp()
  beforeAll(async () => {
    token = await accessToken(t.app, await newClient(t))
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  })

  it('runs every user operation, twice over, with the token as a default header', async () => {
    const run = await client({ Authorization: `Bearer ${token}` })
    const user = {
      id: 10,
      username: 'theUser',
      firstName: 'John',
      lastName: 'James',
      email: 'john@email.com',
      password: '12345',
      phone: '12345',
      userStatus: 1,
    }
    const { password: _password, ...shown } = user
    // A suite run a second time finds its records there and replaces them.
    for (let round = 0; round < 2; round++) {
      expect((await run({ operationId: 'createUser', parameters: { body: user } })).status).toBe(200)
      const got = await run({ operationId: 'getUserByName', parameters: { username: 'theUser' } })
      expect(got.body).toEqual(shown)
      const login = await run({
        operationId: 'loginUser',
        parameters: { username: 'theUser', password: '12345' },
      })
      expect(login.status).toBe(200)
      expect(login.body).toMatch(/^logged in user session:/)
      expect(Number(login.headers['x-rate-limit'])).toBeGreaterThan(0)
      expect(Date.parse(login.headers['x-expires-after']!)).toBeGreaterThan(Date.now())
      expect((await run({ operationId: 'logoutUser' })).status).toBe(200)
      const updated = await run({
        operationId: 'updateUser',
        parameters: { username: 'theUser', body: { ...user, firstName: 'Johnny' } },
      })
      expect(updated.status).toBe(200)
      for (const operationId of ['createUsersWithArrayInput', 'createUsersWithListInput']) {
        const batch = await run({
          operationId,
          parameters: { body: [{ ...user, id: 11, username: 'user1' }, { username: 'user2' }] },
        })
        expect(batch.status).toBe(200)
      }
      expect((await run({ operationId: 'getUserByName', parameters: { username: 'user2' } })).status).toBe(
        200,
      )
      expect((await run({ operationId: 'deleteUser', parameters: { username: 'user2' } })).status).toBe(200)
    }
    expect((await run({ operationId: 'getUserByName', parameters: { username: 'theUser' } })).body).toEqual({
      ...shown,
      firstName: 'Johnny',
    })
    const wrong = await run({
      operationId: 'loginUser',
      parameters: { username: 'theUser', password: 'nope' },
    })
    expect(wrong.status).toBe(400)
    expect((await run({ operationId: 'getUserByName', parameters: { username: 'nobody' } })).status).toBe(404)
  })

  it("runs the swagger-client recipe of docs/petstore-differences.md as written, beside the client's own authorizations", async () => {
    const docs = readFileSync(new URL('../../../docs/petstore-differences.md', import.meta.url), 'utf8')
    const recipe = /^- swagger-client \(JavaScript\): `(.+)`$/m.exec(docs)?.[1]
    expect(recipe).toBeDefined()
    // The recipe is the text of an option of the client; it reads `token` from its scope.
    const options = new Function('token', `return { ${recipe} }`)(token) as Record<string, unknown>
    const swagger = await SwaggerClient({
      spec: { ...PETSTORE, host, schemes: ['http'] },
      // A user who also gives the client its declared credential, as its documentation says to.
      authorizations: { petstore_auth: { token: { access_token: token } } },
      ...options,
    })
    const run = answersOf(swagger)
    const user = { id: 20, username: 'recipe', firstName: 'Rec' }
    expect((await run({ operationId: 'createUser', parameters: { body: user } })).status).toBe(200)
    expect((await run({ operationId: 'getUserByName', parameters: { username: 'recipe' } })).body).toEqual(
      user,
    )
    const pet = await run({ operationId: 'addPet', parameters: { body: { name: 'doggie', photoUrls: [] } } })
    expect(pet.status).toBe(200)
    const { id } = pet.body as { id: number }
    expect((await run({ operationId: 'getPetById', parameters: { petId: id } })).status).toBe(200)
  })

  it('answers the same client without the default header 401, saying to set one', async () => {
    const run = await client({})
    const res = await run({ operationId: 'getUserByName', parameters: { username: 'theUser' } })
    expect(res.status).toBe(401)
    expect((res.body as { detail: string }).detail).toContain('default header')
  })
})
