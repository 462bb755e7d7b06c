import { importJWK, SignJWT } from 'jose'
import { beforeAll, expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { multipart, PNG } from '../../helpers/multipart.ts'
import { accessToken, bearer, newClient, type TestClient } from '../../helpers/oauth.ts'

describeDb('v2 pets (Petstore compatible)', () => {
  let client: TestClient
  let token: string
  let readOnly: string
  let otherToken: string

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers = {}) =>
    t.app.inject({
      method,
      url,
      headers: { ...bearer(token), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  async function addPet(body: Record<string, unknown> = {}) {
    const res = await call('POST', '/v2/pet', { name: 'doggie', photoUrls: [], ...body })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    token = await accessToken(t.app, client)
    readOnly = await accessToken(t.app, client, 'read:pets read:users')
    otherToken = await accessToken(t.app, await newClient(t))
  })

  it('adds a pet (200) and reads it back exactly as sent: same fields, empty arrays kept, nothing null', async () => {
    const sent = {
      category: { id: 1, name: 'Dogs' },
      name: 'doggie',
      photoUrls: ['https://example.com/a.jpg'],
      tags: [],
      status: 'available',
    }
    const res = await call('POST', '/v2/pet', sent)
    expect(res.statusCode).toBe(200)
    expect(res.headers.etag).toBe('"1"')
    const pet = res.json()
    expect(pet).toEqual({ id: pet.id, ...sent })
    const read = await call('GET', `/v2/pet/${pet.id}`)
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual({ id: pet.id, ...sent })
  })

  it('takes null as absent on every optional field, category and tag members included (POST and PUT)', async () => {
    const res = await call('POST', '/v2/pet', {
      id: null,
      name: 'nulls',
      photoUrls: [],
      status: null,
      category: null,
      tags: null,
      ownerId: null,
      species: null,
      breed: null,
    })
    expect(res.statusCode, res.body).toBe(200)
    const pet = res.json()
    expect(pet).toEqual({ id: pet.id, name: 'nulls', photoUrls: [] })

    const put = await call('PUT', '/v2/pet', {
      id: pet.id,
      name: 'members',
      photoUrls: [],
      status: null,
      category: { id: null, name: 'Dogs' },
      tags: [
        { id: null, name: 'x' },
        { id: 3, name: null },
      ],
    })
    expect(put.statusCode, put.body).toBe(200)
    const expected = {
      id: pet.id,
      name: 'members',
      photoUrls: [],
      category: { name: 'Dogs' },
      tags: [{ name: 'x' }, { id: 3 }],
    }
    expect(put.json()).toEqual(expected)
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual(expected)
  })

  it('leaves absent fields absent (no status, no tags, no category)', async () => {
    const pet = await addPet({ name: 'bare' })
    expect(pet).toEqual({ id: pet.id, name: 'bare', photoUrls: [] })
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual({
      id: pet.id,
      name: 'bare',
      photoUrls: [],
    })
  })

  it('shows the same record on v1, in v1’s shape', async () => {
    const pet = await addPet({ name: 'both', tags: [{ id: 7, name: 'good' }], species: 'dog' })
    const v1 = await withKey(t.app, client.apiKey)({ method: 'GET', url: `/v1/pet/${pet.id}` })
    expect(v1.statusCode).toBe(200)
    expect(v1.json()).toMatchObject({
      id: pet.id,
      object: 'pet',
      name: 'both',
      species: 'dog',
      status: 'available',
      photo_urls: [],
      tags: [{ id: 7, name: 'good' }],
      category: null,
    })
  })

  it('shows a v1 pet on v2 with its set fields only', async () => {
    const v1 = await withKey(
      t.app,
      client.apiKey,
    )({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', species: 'dog' }) })
    const id = v1.json().id
    expect((await call('GET', `/v2/pet/${id}`)).json()).toEqual({
      id,
      name: 'Rex',
      photoUrls: [],
      status: 'available',
      species: 'dog',
    })
  })

  it('shows status on v2 again once a v1 write names it', async () => {
    const pet = await addPet({ name: 'nostatus' })
    const patched = await withKey(
      t.app,
      client.apiKey,
    )({ method: 'PATCH', url: `/v1/pet/${pet.id}`, ...form({ status: 'available' }) })
    expect(patched.statusCode).toBe(200)
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual({ ...pet, status: 'available' })
  })

  it('refuses a non-JSON body with 415', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      const res = await t.app.inject({
        method,
        url: '/v2/pet',
        headers: { ...bearer(token), ...form({}).headers },
        payload: 'id=1&name=x',
      })
      expect(res.statusCode).toBe(415)
      expect(res.json().code).toBe('unsupported_media_type')
    }
  })

  it('answers an invalid new pet with 422 "Validation exception" listing the fields, and creates nothing', async () => {
    const before = (await call('GET', '/v2/store/inventory')).json()
    const res = await call('POST', '/v2/pet', { name: '', photoUrls: 'x', colour: 'red' })
    expect(res.statusCode).toBe(422)
    const problem = res.json()
    expect(problem).toMatchObject({ status: 422, title: 'Validation exception', code: 'validation_failed' })
    expect(problem.errors.map((e: { param: string }) => e.param).sort()).toEqual([
      'colour',
      'name',
      'photoUrls',
    ])
    expect((await call('GET', '/v2/store/inventory')).json()).toEqual(before)
    const missing = await call('POST', '/v2/pet', {})
    expect(missing.statusCode).toBe(422)
    expect(
      missing
        .json()
        .errors.map((e: { param: string }) => e.param)
        .sort(),
    ).toEqual(['name', 'photoUrls'])
  })

  it('PUT replaces the Petstore fields and reads back exactly as sent', async () => {
    const pet = await addPet({
      category: { id: 1, name: 'Dogs' },
      tags: [{ name: 'a' }],
      status: 'available',
    })
    const sent = { id: pet.id, name: 'renamed', photoUrls: ['u1', 'u2'], status: 'pending' }
    const res = await call('PUT', '/v2/pet', sent)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual(sent)
    expect(res.headers.etag).toBe('"2"')
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual(sent)
  })

  it.each([
    ['missing', { name: 'x', photoUrls: [] }],
    ['a string', { id: '12', name: 'x', photoUrls: [] }],
    ['a fraction', { id: 1.5, name: 'x', photoUrls: [] }],
    ['above int64', { id: 2 ** 63, name: 'x', photoUrls: [] }],
    ['below int64', { id: -(2 ** 64), name: 'x', photoUrls: [] }],
  ])('PUT answers 400 "Invalid ID supplied" for an id that is %s', async (_case, body) => {
    const res = await call('PUT', '/v2/pet', body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ title: 'Invalid ID supplied', code: 'invalid_id' })
  })

  it('PUT checks an int64 id on its digits: 2^63-1 is a valid id (404), 2^63 is not (400)', async () => {
    const raw = (id: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/v2/pet',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: `{"id": ${id}, "name": "x", "photoUrls": []}`,
      })
    expect((await raw('9223372036854775807')).statusCode).toBe(404)
    expect((await raw('9223372036854775808')).statusCode).toBe(400)
  })

  it('PUT answers 404 "Pet not found" for an unknown id', async () => {
    const res = await call('PUT', '/v2/pet', { id: 999999, name: 'x', photoUrls: [] })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ title: 'Pet not found', code: 'pet_not_found' })
  })

  it('PUT answers 422 listing the fields at fault and changes nothing', async () => {
    const pet = await addPet({ name: 'keep' })
    const res = await call('PUT', '/v2/pet', { id: pet.id, name: 5, status: 'lost' })
    expect(res.statusCode).toBe(422)
    expect(
      res
        .json()
        .errors.map((e: { param: string }) => e.param)
        .sort(),
    ).toEqual(['name', 'photoUrls', 'status'])
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual(pet)
  })

  it('PUT honours If-Match: 412 when stale, 200 when current', async () => {
    const pet = await addPet()
    const stale = await call('PUT', '/v2/pet', { ...pet, name: 'x' }, { 'if-match': '"9"' })
    expect(stale.statusCode).toBe(412)
    const ok = await call('PUT', '/v2/pet', { ...pet, name: 'x' }, { 'if-match': '"1"' })
    expect(ok.statusCode).toBe(200)
  })

  it('PUT keeps the domain rules: a sold pet cannot become available (409)', async () => {
    const pet = await addPet({ status: 'sold' })
    const res = await call('PUT', '/v2/pet', { ...pet, status: 'available' })
    expect(res.statusCode).toBe(409)
    expect(res.json().code).toBe('invalid_status_transition')
  })

  it('answers 404 to another account for GET, PUT and DELETE, and changes nothing', async () => {
    const pet = await addPet({ name: 'mine' })
    const as = (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: bearer(otherToken),
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
    expect((await as('GET', `/v2/pet/${pet.id}`)).statusCode).toBe(404)
    expect((await as('PUT', '/v2/pet', { ...pet, name: 'theirs' })).statusCode).toBe(404)
    expect((await as('DELETE', `/v2/pet/${pet.id}`)).statusCode).toBe(404)
    expect((await call('GET', `/v2/pet/${pet.id}`)).json()).toEqual(pet)
  })

  it('GET answers 400 "Invalid ID supplied" for a non-integer or out-of-int64 id, 404 for an unknown one', async () => {
    for (const id of ['abc', '1.5', '9223372036854775808']) {
      const res = await call('GET', `/v2/pet/${id}`)
      expect(res.statusCode, id).toBe(400)
      expect(res.json().code).toBe('invalid_id')
    }
    expect((await call('GET', '/v2/pet/9223372036854775807')).statusCode).toBe(404)
    expect((await call('GET', '/v2/pet/0')).statusCode).toBe(404)
  })

  it('updates name and status from a form (POST /v2/pet/{petId})', async () => {
    const pet = await addPet({ name: 'form' })
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/pet/${pet.id}`,
      headers: { ...bearer(token), ...form({}).headers },
      payload: 'name=formed&status=pending',
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ id: pet.id, name: 'formed', photoUrls: [], status: 'pending' })
    const bad = await t.app.inject({
      method: 'POST',
      url: `/v2/pet/${pet.id}`,
      headers: { ...bearer(token), ...form({}).headers },
      payload: 'status=lost',
    })
    expect(bad.statusCode).toBe(400)
    expect((await call('POST', '/v2/pet/424242', { name: 'x' })).statusCode).toBe(404)
  })

  it('deletes a pet, answering the Petstore ApiResponse; then it is gone', async () => {
    const pet = await addPet()
    const res = await call('DELETE', `/v2/pet/${pet.id}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ code: 200, type: 'unknown', message: String(pet.id) })
    expect((await call('GET', `/v2/pet/${pet.id}`)).statusCode).toBe(404)
    expect((await call('DELETE', `/v2/pet/${pet.id}`)).statusCode).toBe(404)
  })

  it('finds pets by status, with repeated parameters and comma lists', async () => {
    const fresh = await newClient(t)
    const own = await accessToken(t.app, fresh)
    const add = (status: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(own),
        payload: { name: status, photoUrls: [], status },
      })
    await add('available')
    await add('pending')
    await add('sold')
    const find = (query: string) =>
      t.app.inject({ method: 'GET', url: `/v2/pet/findByStatus?${query}`, headers: bearer(own) })
    const names = async (query: string) =>
      ((await find(query)).json() as { name: string }[]).map((p) => p.name).sort()
    expect(await names('status=available')).toEqual(['available'])
    expect(await names('status=available&status=sold')).toEqual(['available', 'sold'])
    expect(await names('status=pending,sold')).toEqual(['pending', 'sold'])
    const bad = await find('status=lost')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().param).toBe('status')
    expect((await find('')).statusCode).toBe(400)
  })

  it('finds pets by tags', async () => {
    const fresh = await newClient(t)
    const own = await accessToken(t.app, fresh)
    const add = (name: string, tags: { name: string }[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(own),
        payload: { name, photoUrls: [], tags },
      })
    await add('a', [{ name: 'small' }, { name: 'fluffy' }])
    await add('b', [{ name: 'large' }])
    await add('c', [{ name: 'small_dog' }])
    const find = async (query: string) =>
      (
        (
          await t.app.inject({ method: 'GET', url: `/v2/pet/findByTags?${query}`, headers: bearer(own) })
        ).json() as {
          name: string
        }[]
      )
        .map((p) => p.name)
        .sort()
    expect(await find('tags=small')).toEqual(['a'])
    expect(await find('tags=small&tags=large')).toEqual(['a', 'b'])
    expect(await find('tags=fluffy,small_dog')).toEqual(['a', 'c'])
    expect(await find('tags=none')).toEqual([])
  })

  it('counts pets by status in the inventory', async () => {
    const fresh = await newClient(t)
    const own = await accessToken(t.app, fresh)
    for (const status of ['available', 'available', 'sold']) {
      await t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(own),
        payload: { name: 'x', photoUrls: [], status },
      })
    }
    const res = await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(own) })
    expect(res.json()).toEqual({ available: 2, pending: 0, sold: 1 })
  })

  it('uploads an image: stored, served, its URL added to photoUrls; answers {code,type,message}', async () => {
    const pet = await addPet({ photoUrls: ['https://example.com/first.jpg'] })
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/pet/${pet.id}/uploadImage`,
      ...(() => {
        const body = multipart([
          { name: 'additionalMetadata', data: 'front view' },
          { name: 'file', filename: 'dot.png', type: 'image/png', data: PNG },
        ])
        return { payload: body.payload, headers: { ...body.headers, ...bearer(token) } }
      })(),
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ code: 200, type: 'unknown' })
    expect(res.json().message).toContain('front view')
    const after = (await call('GET', `/v2/pet/${pet.id}`)).json()
    expect(after.photoUrls).toHaveLength(2)
    const url = new URL(after.photoUrls[1])
    const image = await t.app.inject({ method: 'GET', url: url.pathname })
    expect(image.statusCode).toBe(200)
    expect(image.headers['content-type']).toBe('image/png')
    expect(image.rawPayload.equals(PNG)).toBe(true)
  })

  it('refuses an upload that is not an image (415), too large (413), for an unknown pet (404) or a pet with 20 photos (422)', async () => {
    const pet = await addPet()
    const upload = (id: number, data: Buffer) => {
      const body = multipart([{ name: 'file', filename: 'f.bin', type: 'application/octet-stream', data }])
      return t.app.inject({
        method: 'POST',
        url: `/v2/pet/${id}/uploadImage`,
        payload: body.payload,
        headers: { ...body.headers, ...bearer(token) },
      })
    }
    const text = await upload(pet.id, Buffer.from('hello, not an image'))
    expect(text.statusCode).toBe(415)
    expect(text.json().code).toBe('unsupported_file_type')
    const huge = await upload(pet.id, Buffer.concat([PNG, Buffer.alloc(10 * 1024 * 1024 + 1)]))
    expect(huge.statusCode).toBe(413)
    expect((await upload(987654, PNG)).statusCode).toBe(404)
    const full = await addPet({
      photoUrls: Array.from({ length: 20 }, (_, i) => `https://example.com/${i}.jpg`),
    })
    const noRoom = await upload(full.id, PNG)
    expect(noRoom.statusCode).toBe(422)
    expect(noRoom.json().param).toBe('photoUrls')
    expect((await call('GET', `/v2/pet/${pet.id}`)).json().photoUrls).toEqual([])
  })

  it('answers no token with 401 and a bare Bearer challenge (RFC 6750 §3)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/pet/1' })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer')
    expect(res.json().code).toBe('token_missing')
  })

  it('answers two Authorization values, joined or on two lines, with 400 invalid_request saying so (RFC 6750 §3.1)', async () => {
    for (const authorization of [
      `Bearer ${token}, Bearer ${token}`,
      [`Bearer ${token}`, `Bearer ${token}`],
    ]) {
      // An array is two header lines (Node's typings allow Authorization one).
      const res = await t.app.inject({
        method: 'GET',
        url: '/v2/pet/1',
        headers: { authorization } as Record<string, string | string[]>,
      })
      expect(res.statusCode).toBe(400)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_request"/)
      expect(res.json().code).toBe('invalid_request')
      expect(res.json().detail).toMatch(/Authorization .*2 values \(Bearer, Bearer\).*send it once/)
      expect(res.body).not.toContain(token.slice(-12))
    }
  })

  it('answers a malformed, foreign-signed or expired token with 401 error="invalid_token"', async () => {
    const row = await t.database.db
      .selectFrom('oauth_keys')
      .select('value')
      .where('id', '=', 'signing')
      .executeTakeFirstOrThrow()
    const key = await importJWK(JSON.parse(row.value), 'ES256')
    const expired = await new SignJWT({
      client_id: client.clientId,
      account_id: client.accountId,
      scope: 'read:pets',
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
      .setIssuer('http://localhost:8080')
      .setAudience('http://localhost:8080/v2')
      .setJti('expired-1')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(key)
    const [header, payload] = token.split('.')
    const forged = `${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`
    for (const bad of ['garbage', forged, expired]) {
      const res = await t.app.inject({ method: 'GET', url: '/v2/store/inventory', headers: bearer(bad) })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/)
      expect(res.json().code).toBe('token_invalid')
    }
  })

  it('refuses writes with a read-only token: 403 error="insufficient_scope", scope="write:pets"', async () => {
    const pet = await addPet({ name: 'ro' })
    const as = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: bearer(readOnly),
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
    for (const res of [
      await as('POST', '/v2/pet', { name: 'x', photoUrls: [] }),
      await as('PUT', '/v2/pet', { ...pet, name: 'changed' }),
      await as('DELETE', `/v2/pet/${pet.id}`),
    ]) {
      expect(res.statusCode).toBe(403)
      expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"')
      expect(res.headers['www-authenticate']).toContain('scope="write:pets"')
      expect(res.json().code).toBe('insufficient_scope')
    }
    const read = await t.app.inject({ method: 'GET', url: `/v2/pet/${pet.id}`, headers: bearer(readOnly) })
    expect(read.json()).toEqual(pet)
  })

  it('takes an API key in the api_key header for get, delete and the inventory only', async () => {
    const pet = await addPet({ name: 'keyed' })
    const withApiKey = (method: 'GET' | 'DELETE' | 'PUT', url: string, payload?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { api_key: client.apiKey },
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
    expect((await withApiKey('GET', `/v2/pet/${pet.id}`)).json()).toEqual(pet)
    expect((await withApiKey('GET', '/v2/store/inventory')).statusCode).toBe(200)
    const put = await withApiKey('PUT', '/v2/pet', { ...pet, name: 'nope' })
    expect(put.statusCode).toBe(401)
    expect(put.headers['www-authenticate']).toBe('Bearer')
    const wrong = await t.app.inject({
      method: 'GET',
      url: `/v2/pet/${pet.id}`,
      headers: { api_key: 'pet_sk_wrong' },
    })
    expect(wrong.statusCode).toBe(401)
    expect((await withApiKey('DELETE', `/v2/pet/${pet.id}`)).statusCode).toBe(200)
  })
})
