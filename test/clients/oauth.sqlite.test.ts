import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { type Io, run } from '../../cli/petctl/main.ts'
import { AuthenticationError, PetService } from '../../clients/typescript/src/index.ts'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { startProxy } from '../helpers/misbehaving-proxy.ts'
import { oauthClientEnv } from '../helpers/oauth.ts'

// OAuth 2.0 client credentials (RFC 6749 §4.4) against the service's real authorisation server,
// and the Petstore update (PUT /v2/pet) it unlocks, from the TypeScript client and petctl.
describeDb('OAuth from the TypeScript client and petctl', () => {
  let live: LiveServer
  let apiKey: string
  let clientId: string
  let clientSecret: string
  let keyClient: PetService

  beforeAll(async () => {
    live = await startLiveServer()
    const account = await live.newAccount()
    apiKey = account.apiKey
    const env = await oauthClientEnv(live, account.accountId)
    clientId = env.PET_SERVICE_CLIENT_ID!
    clientSecret = env.PET_SERVICE_CLIENT_SECRET!
    keyClient = new PetService({ apiKey, baseUrl: live.url })
  })
  afterAll(() => live.close())

  /** A client that counts the requests it sends per path. */
  function counted(options: ConstructorParameters<typeof PetService>[0]) {
    const paths: string[] = []
    const client = new PetService({
      ...options,
      fetch: (input, init) => {
        paths.push(new URL(String(input)).pathname)
        return fetch(input, init)
      },
    })
    return { client, paths }
  }

  it('fetches a client-credentials token itself and replaces a pet with PUT /v2/pet', async () => {
    const pet = await keyClient.pets.create({ name: 'Rex', species: 'dog' })
    const { client, paths } = counted({ baseUrl: live.url, clientId, clientSecret, scope: 'write:pets' })
    const updated = await client.pets.replace({
      id: pet.id,
      name: 'Rex II',
      photoUrls: ['https://example.com/rex.jpg'],
      status: 'pending',
      tags: [{ id: 1, name: 'good' }],
    })
    expect(updated).toMatchObject({
      id: pet.id,
      name: 'Rex II',
      photoUrls: ['https://example.com/rex.jpg'],
      status: 'pending',
      tags: [{ id: 1, name: 'good' }],
    })
    expect(updated.lastResponse.requestId).toMatch(/^req_/)
    expect(paths).toEqual(['/oauth/token', '/v2/pet'])
    expect(await keyClient.pets.get(pet.id)).toMatchObject({ name: 'Rex II', status: 'pending' })

    // The token is cached: a second update asks for no new one.
    await client.pets.replace({ id: pet.id, name: 'Rex III', photoUrls: [] })
    expect(paths).toEqual(['/oauth/token', '/v2/pet', '/v2/pet'])
    const token = await client.oauth.token()
    expect(token.token_type.toLowerCase()).toBe('bearer')
    expect(token.access_token.split('.')).toHaveLength(3)
  })

  it('still replaces a pet through pets.update with a Petstore pet, warning once per client to use pets.replace', async () => {
    const pet = await keyClient.pets.create({ name: 'Old' })
    const client = new PetService({ baseUrl: live.url, clientId, clientSecret, scope: 'write:pets' })
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      expect(await client.pets.update({ id: pet.id, name: 'Old II', photoUrls: [] })).toMatchObject({
        id: pet.id,
        name: 'Old II',
        photoUrls: [],
      })
      await client.pets.update({ id: pet.id, name: 'Old III', photoUrls: [] })
      expect(warn.mock.calls).toEqual([
        [
          '@pet-service/client: pets.update(pet) is deprecated and will be removed in 0.3.0; use pets.replace(pet).',
        ],
      ])
      // The v1 shape is not deprecated.
      await keyClient.pets.update(pet.id, { species: 'cat' })
      expect(warn).toHaveBeenCalledTimes(1)
    } finally {
      warn.mockRestore()
    }
    expect(await keyClient.pets.get(pet.id)).toMatchObject({ name: 'Old III', species: 'cat' })
  })

  it('reaches any other operation through request(), with the OAuth token on /v2 paths', async () => {
    const pet = await keyClient.pets.create({ name: 'Found', status: 'sold' })
    const client = new PetService({ baseUrl: live.url, clientId, clientSecret, scope: 'read:pets' })
    const found = await client.request<{ id: number; name: string }[]>('GET', '/v2/pet/findByStatus', {
      query: { status: 'sold' },
    })
    expect(found.map((p) => p.id)).toContain(pet.id)
    expect(found.lastResponse.requestId).toMatch(/^req_/)
  })

  it('shares one token request among concurrent calls', async () => {
    const pet = await keyClient.pets.create({ name: 'Many' })
    const { client, paths } = counted({ baseUrl: live.url, clientId, clientSecret })
    await Promise.all(
      [1, 2, 3].map((n) => client.pets.replace({ id: pet.id, name: `Many ${n}`, photoUrls: [] })),
    )
    expect(paths.filter((p) => p === '/oauth/token')).toHaveLength(1)
  })

  it('uses a ready access token as given', async () => {
    const pet = await keyClient.pets.create({ name: 'Tok' })
    const { access_token } = await new PetService({ baseUrl: live.url, clientId, clientSecret }).oauth.token()
    const { client, paths } = counted({ baseUrl: live.url, accessToken: access_token })
    expect(await client.pets.replace({ id: pet.id, name: 'Tokened', photoUrls: [] })).toMatchObject({
      name: 'Tokened',
    })
    expect(paths).toEqual(['/v2/pet'])
  })

  it('fetches a new token once when the service refuses the cached one', async () => {
    const pet = await keyClient.pets.create({ name: 'Renew' })
    let refused = false
    const proxy = await startProxy(live.url, (_n, request) => {
      if (request.url === '/v2/pet' && !refused) {
        refused = true
        return {
          kind: 'answer',
          status: 401,
          headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
          body: { status: 401, code: 'invalid_token', detail: 'The access token expired.' },
        }
      }
      return { kind: 'forward' }
    })
    try {
      const client = new PetService({ baseUrl: proxy.url, clientId, clientSecret })
      expect(await client.pets.replace({ id: pet.id, name: 'Renewed', photoUrls: [] })).toMatchObject({
        name: 'Renewed',
      })
      expect(proxy.seen.map((r) => r.url)).toEqual(['/oauth/token', '/v2/pet', '/oauth/token', '/v2/pet'])
    } finally {
      await proxy.close()
    }
  })

  it('raises AuthenticationError for a wrong client secret, and for PUT /v2/pet with only an API key', async () => {
    const wrong = new PetService({ baseUrl: live.url, clientId, clientSecret: 'pet_cs_wrong' })
    const error = await wrong.oauth.token().catch((e) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error.code).toBe('invalid_client')
    const pet = await keyClient.pets.create({ name: 'Keyed' })
    const keyOnly = await keyClient.pets.replace({ id: pet.id, name: 'X', photoUrls: [] }).catch((e) => e)
    expect(keyOnly).toBeInstanceOf(AuthenticationError)
    expect(keyOnly.status).toBe(401)
  })

  it('petctl token prints an access token, and petctl pets update --v2 replaces a pet', async () => {
    const out: string[] = []
    const err: string[] = []
    const io: Io = {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      env: {
        PET_SERVICE_URL: live.url,
        PET_SERVICE_CLIENT_ID: clientId,
        PET_SERVICE_CLIENT_SECRET: clientSecret,
        PET_SERVICE_API_KEY: apiKey,
      },
      progress: false,
    }
    expect(await run(['token', '--scope', 'write:pets'], io), err.join()).toBe(0)
    expect(out[0]!.split('.')).toHaveLength(3)
    const pet = await keyClient.pets.create({ name: 'Cli' })
    const code = await run(
      [
        'pets',
        'update',
        String(pet.id),
        '--v2',
        '--name',
        'Cli II',
        '--photo-url',
        'https://example.com/a.jpg',
        '--json',
      ],
      io,
    )
    expect(code, err.join()).toBe(0)
    expect(JSON.parse(out[1]!)).toMatchObject({
      id: pet.id,
      name: 'Cli II',
      photoUrls: ['https://example.com/a.jpg'],
    })
    const bad = await run(['token'], { ...io, env: { ...io.env, PET_SERVICE_CLIENT_SECRET: 'pet_cs_wrong' } })
    expect(bad).toBe(1)
    expect(err.join('\n')).toContain('invalid_client')
  })
})
