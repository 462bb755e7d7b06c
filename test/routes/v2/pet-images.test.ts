import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sqlitePath } from '../../../src/config/config.ts'
import { createClient } from '../../../src/oauth/clients-service.ts'
import { createTestApp, type TestApp, withKey } from '../../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../../helpers/cli.ts'
import { DIALECT, describeDb } from '../../helpers/database.ts'
import { multipart, PNG, pngOfSize } from '../../helpers/multipart.ts'
import { accessToken, bearer, clientBasic, newClient } from '../../helpers/oauth.ts'

const QUOTA = 4000

describeDb('v2 pet images: stored in the database, deleted with their URL or pet, within a quota', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({ IMAGE_QUOTA_BYTES: String(QUOTA) })
  })
  afterAll(() => t.close())

  /** A new account with a write token, and helpers that act as it. */
  async function asNewAccount() {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) })
    const addPet = async (body: Record<string, unknown> = {}) => {
      const res = await call('POST', '/v2/pet', { name: 'doggie', photoUrls: [], ...body })
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as { id: number; name: string; photoUrls: string[] }
    }
    const upload = (petId: number, data: Buffer = PNG) => {
      const body = multipart([{ name: 'file', filename: 'photo.png', type: 'image/png', data }])
      return t.app.inject({
        method: 'POST',
        url: `/v2/pet/${petId}/uploadImage`,
        payload: body.payload,
        headers: { ...body.headers, ...bearer(token) },
      })
    }
    /** Uploads an image and answers its URL's path. */
    const uploaded = async (petId: number, data: Buffer = PNG) => {
      const res = await upload(petId, data)
      expect(res.statusCode, res.body).toBe(200)
      const pet = (await call('GET', `/v2/pet/${petId}`)).json() as { photoUrls: string[] }
      return new URL(pet.photoUrls.at(-1)!).pathname
    }
    const storedImages = async () =>
      (
        await t.database.db
          .selectFrom('pet_images')
          .select(['name', 'size_bytes'])
          .where('account_id', '=', client.accountId)
          .execute()
      ).length
    return { client, token, call, addPet, upload, uploaded, storedImages }
  }

  const fetchImage = (path: string) => t.app.inject({ method: 'GET', url: path })

  it('answers as the Petstore does, naming the uploaded file and its size (and where it is served)', async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const body = multipart([
      { name: 'additionalMetadata', data: 'front view' },
      { name: 'file', filename: 'C:\\photos\\rex.png', type: 'image/png', data: PNG },
    ])
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/pet/${pet.id}/uploadImage`,
      payload: body.payload,
      headers: { ...body.headers, ...bearer(me.token) },
    })
    expect(res.statusCode, res.body).toBe(200)
    const url = ((await me.call('GET', `/v2/pet/${pet.id}`)).json() as { photoUrls: string[] }).photoUrls[0]
    expect(res.json()).toEqual({
      code: 200,
      type: 'unknown',
      message: `additionalMetadata: front view\nFile uploaded to ./rex.png, ${PNG.length} bytes\nServed at ${url}`,
    })
  })

  it('serves an uploaded image from the database with its type, an immutable cache and nosniff', async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const path = await me.uploaded(pet.id)
    const image = await fetchImage(path)
    expect(image.statusCode).toBe(200)
    expect(image.headers['content-type']).toBe('image/png')
    expect(image.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(image.headers['x-content-type-options']).toBe('nosniff')
    expect(image.rawPayload.equals(PNG)).toBe(true)
    expect(await me.storedImages()).toBe(1)
    if (DIALECT === 'sqlite') {
      // Nothing on the local disk: another instance could not see it there.
      expect(existsSync(join(dirname(sqlitePath(t.database.url)), 'uploads'))).toBe(false)
    }
  })

  it("answers HEAD with the image's type and length, and no body", async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const path = await me.uploaded(pet.id)
    const head = await t.app.inject({ method: 'HEAD', url: path })
    expect(head.statusCode).toBe(200)
    expect(head.headers['content-type']).toBe('image/png')
    expect(head.headers['content-length']).toBe(String(PNG.length))
    expect(head.rawPayload).toHaveLength(0)
  })

  it('deletes an image once a PUT replaces photoUrls without its URL, and keeps those still listed', async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const dropped = await me.uploaded(pet.id)
    const kept = await me.uploaded(pet.id)
    const current = (await me.call('GET', `/v2/pet/${pet.id}`)).json() as { photoUrls: string[] }
    const keptUrl = current.photoUrls.find((u) => u.endsWith(kept))!
    const put = await me.call('PUT', '/v2/pet', {
      id: pet.id,
      name: 'renamed',
      photoUrls: [keptUrl, 'https://example.com/elsewhere.jpg'],
    })
    expect(put.statusCode, put.body).toBe(200)
    expect((await fetchImage(dropped)).statusCode).toBe(404)
    expect((await fetchImage(dropped)).json().code).toBe('not_found')
    expect((await fetchImage(kept)).statusCode).toBe(200)
    expect(await me.storedImages()).toBe(1)
  })

  it('deletes every image of a pet once a PUT empties its photoUrls', async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const first = await me.uploaded(pet.id)
    const second = await me.uploaded(pet.id)
    const put = await me.call('PUT', '/v2/pet', { id: pet.id, name: 'doggie', photoUrls: [] })
    expect(put.statusCode, put.body).toBe(200)
    expect((await fetchImage(first)).statusCode).toBe(404)
    expect((await fetchImage(second)).statusCode).toBe(404)
    expect(await me.storedImages()).toBe(0)
  })

  it('deletes the images of a deleted pet (v2 and v1): their URLs answer 404', async () => {
    const me = await asNewAccount()
    const v2Pet = await me.addPet()
    const v2Image = await me.uploaded(v2Pet.id)
    expect((await me.call('DELETE', `/v2/pet/${v2Pet.id}`)).statusCode).toBe(200)
    expect((await fetchImage(v2Image)).statusCode).toBe(404)

    const v1Pet = await me.addPet()
    const v1Image = await me.uploaded(v1Pet.id)
    const v1 = withKey(t.app, me.client.apiKey)
    expect((await v1({ method: 'DELETE', url: `/v1/pet/${v1Pet.id}` })).statusCode).toBe(200)
    expect((await fetchImage(v1Image)).statusCode).toBe(404)
    expect(await me.storedImages()).toBe(0)
  })

  it('writes nothing for a refused upload (415, 413, 422)', async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    expect((await me.upload(pet.id, Buffer.from('not an image'))).statusCode).toBe(415)
    expect((await me.upload(pet.id, pngOfSize(10 * 1024 * 1024 + 1))).statusCode).toBe(413)
    const full = await me.addPet({
      photoUrls: Array.from({ length: 20 }, (_, i) => `https://example.com/${i}.jpg`),
    })
    expect((await me.upload(full.id, PNG)).statusCode).toBe(422)
    expect(await me.storedImages()).toBe(0)
    expect((await me.call('GET', `/v2/pet/${pet.id}`)).json().photoUrls).toEqual([])
  })

  it(`refuses an upload past the account's quota with 413 naming the quota and the usage`, async () => {
    const me = await asNewAccount()
    const pet = await me.addPet()
    const first = await me.uploaded(pet.id, pngOfSize(1500))
    await me.uploaded(pet.id, pngOfSize(1500))
    const refused = await me.upload(pet.id, pngOfSize(1500))
    expect(refused.statusCode).toBe(413)
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    const problem = refused.json()
    expect(problem).toMatchObject({
      code: 'image_quota_exceeded',
      param: 'file',
      quota_bytes: QUOTA,
      used_bytes: 3000,
    })
    expect(problem.detail).toContain(String(QUOTA))
    expect(problem.detail).toContain('3000')
    expect(await me.storedImages()).toBe(2)
    expect((await me.call('GET', `/v2/pet/${pet.id}`)).json().photoUrls).toHaveLength(2)

    // Another account has its own quota.
    const other = await asNewAccount()
    await other.uploaded((await other.addPet()).id, pngOfSize(1500))

    // Deleting an image frees its room.
    const current = (await me.call('GET', `/v2/pet/${pet.id}`)).json() as { photoUrls: string[] }
    await me.call('PUT', '/v2/pet', {
      id: pet.id,
      name: 'doggie',
      photoUrls: current.photoUrls.filter((u) => !u.endsWith(first)),
    })
    expect((await me.upload(pet.id, pngOfSize(1500))).statusCode).toBe(200)
  })

  it('lets only one of two simultaneous uploads through when both fit the quota alone but not together', async () => {
    const me = await asNewAccount()
    const [a, b] = [await me.addPet(), await me.addPet()]
    const results = await Promise.all([me.upload(a.id, pngOfSize(2500)), me.upload(b.id, pngOfSize(2500))])
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 413])
    expect(await me.storedImages()).toBe(1)
  })
})

describeDb('v2 pet images across instances', () => {
  let t: TestApp
  const dirs: string[] = []
  const servers: ServerProcess[] = []

  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => {
    for (const server of servers) {
      server.child.kill('SIGTERM')
      await server.exited
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    await t.close()
  })

  /** An instance of the service in a working directory of its own, as on another machine. */
  async function instance(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'pet-service-instance-'))
    dirs.push(dir)
    const server = await startServerProcess(
      PET_SERVICE_BIN,
      { DATABASE_URL: t.database.url, RATE_LIMIT_RPS: '0' },
      { cwd: dir },
    )
    servers.push(server)
    return `http://127.0.0.1:${server.port}`
  }

  describe('two app instances on one database', () => {
    it('serve the same image, and both stop serving it once its pet is deleted', async () => {
      const [a, b] = await Promise.all([instance(), instance()])
      const account = await t.newAccount()
      const { clientSecret, info } = await createClient(t.database.db, {
        accountId: account.accountId,
        name: 'instances',
      })
      const tokenRes = await fetch(`${a}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: clientBasic(info.client_id, clientSecret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      })
      expect(tokenRes.status).toBe(200)
      const auth = bearer(((await tokenRes.json()) as { access_token: string }).access_token)
      const created = await fetch(`${a}/v2/pet`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Shared', photoUrls: [] }),
      })
      const pet = (await created.json()) as { id: number }
      const body = multipart([{ name: 'file', filename: 'dot.png', type: 'image/png', data: PNG }])
      const uploaded = await fetch(`${a}/v2/pet/${pet.id}/uploadImage`, {
        method: 'POST',
        headers: { ...auth, ...body.headers },
        body: body.payload,
      })
      expect(uploaded.status, await uploaded.clone().text()).toBe(200)
      const read = (await (await fetch(`${b}/v2/pet/${pet.id}`, { headers: auth })).json()) as {
        photoUrls: string[]
      }
      const path = new URL(read.photoUrls[0]!).pathname

      for (const base of [a, b]) {
        const image = await fetch(`${base}${path}`)
        expect(image.status, base).toBe(200)
        expect(image.headers.get('content-type')).toBe('image/png')
        expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true)
      }

      expect((await fetch(`${b}/v2/pet/${pet.id}`, { method: 'DELETE', headers: auth })).status).toBe(200)
      for (const base of [a, b]) expect((await fetch(`${base}${path}`)).status, base).toBe(404)
    }, 60_000)
  })
})
