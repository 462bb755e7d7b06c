import { beforeAll, describe, expect, it } from 'vitest'
import { useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient, type TestClient } from '../helpers/oauth.ts'

describeDb('one API over two presentations', () => {
  let client: TestClient
  let token: string

  const v2 = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url,
      headers: { ...bearer(token), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  const t = useTestApp()
  beforeAll(async () => {
    client = await newClient(t)
    token = await accessToken(t.app, client)
  })

  describe('one int64 rule for every id: pets, v1 and v2 (v2 users are named by username)', () => {
    const invalid = ['abc', '1.5', '1e3', '0x10', '9223372036854775808', '-9223372036854775809']
    const unknown = ['0', '-1', '9007199254740993', '9223372036854775807', '-9223372036854775808']

    it('answers 400 invalid_id for an id that is not digits within int64, and 404 for one no record can have', async () => {
      const v1 = withKey(t.app, client.apiKey)
      const paths = [
        (id: string) => v2('GET', `/v2/pet/${id}`),
        (id: string) => v1({ method: 'GET', url: `/v1/pet/${id}` }),
      ]
      for (const get of paths) {
        for (const id of invalid) {
          const res = await get(id)
          expect([id, res.statusCode, res.json().code]).toEqual([id, 400, 'invalid_id'])
        }
        for (const id of unknown) expect([id, (await get(id)).statusCode]).toEqual([id, 404])
      }
    })

    it('reads an id on its digits, whatever their number: leading zeros name the same pet', async () => {
      const pet = (await v2('POST', '/v2/pet', { name: 'Zero', photoUrls: [] })).json()
      const padded = (id: number) => `${'0'.repeat(22)}${id}`
      expect((await v2('GET', `/v2/pet/${padded(pet.id)}`)).json()).toEqual(pet)
      const v1 = await withKey(t.app, client.apiKey)({ method: 'GET', url: `/v1/pet/${padded(pet.id)}` })
      expect(v1.json().id).toBe(pet.id)
    })
  })

  describe('v2 creates honour Idempotency-Key like v1', () => {
    it.each([
      ['/v2/pet', { name: 'Once', photoUrls: [] }, { name: 'Other', photoUrls: [] }],
      ['/v2/user', { username: 'once', password: 'p4ssw0rd' }, { username: 'other' }],
    ])('POST %s with a key creates once and replays the first answer', async (path, body, otherBody) => {
      const key = { 'idempotency-key': `create-once-${path}` }
      const first = await v2('POST', path, body, key)
      expect(first.statusCode, first.body).toBe(200)
      const again = await v2('POST', path, body, key)
      expect(again.statusCode).toBe(200)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual(first.json())
      expect(again.headers.location).toBe(first.headers.location)
      const other = await v2('POST', path, otherBody, key)
      expect(other.statusCode).toBe(422)
      expect(other.json().code).toBe('idempotency_key_reused')
    })

    it('never keeps a user password in the fingerprint: the same key with another password replays', async () => {
      const key = { 'idempotency-key': 'password-retry' }
      const first = await v2('POST', '/v2/user', { username: 'pw', password: 'first-secret' }, key)
      const again = await v2('POST', '/v2/user', { username: 'pw', password: 'second-secret' }, key)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual(first.json())
    })
  })
})
