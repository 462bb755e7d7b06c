import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  type Pet,
  PetService,
  PetServiceError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../../clients/typescript/src/index.ts'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { serverError, startProxy } from '../helpers/misbehaving-proxy.ts'

// The TypeScript client against the real service over real HTTP (SQLite; the client does not
// care which database the service uses).
describeDb('TypeScript client', () => {
  let live: LiveServer
  let apiKey: string
  let client: PetService

  beforeAll(async () => {
    live = await startLiveServer()
    apiKey = (await live.newAccount()).apiKey
    client = new PetService({ apiKey, baseUrl: live.url })
  })
  afterAll(() => live.close())

  it('creates a pet with name, owner_id, species and breed, exposing the request id', async () => {
    const owner = await client.users.create({ name: 'Ann', email: 'ann@example.com' })
    const pet = await client.pets.create({ name: 'Rex', owner_id: owner.id, species: 'dog', breed: 'collie' })
    expect(pet).toMatchObject({
      object: 'pet',
      name: 'Rex',
      owner_id: owner.id,
      species: 'dog',
      breed: 'collie',
      status: 'available',
    })
    expect(pet.id).toBeGreaterThan(0)
    expect(pet.lastResponse.requestId).toMatch(/^req_/)
    expect(pet.lastResponse.status).toBe(201)
    expect(pet.lastResponse.etag).toBe('"1"')
    // The response metadata is not part of the object's JSON.
    expect(Object.keys(JSON.parse(JSON.stringify(pet)))).not.toContain('lastResponse')
  })

  it('gets, updates (PATCH, with If-Match) and deletes a pet', async () => {
    const created = await client.pets.create({ name: 'Tom', species: 'cat' })
    const fetched = await client.pets.get(created.id)
    expect(fetched).toEqual({ ...created })
    expect(fetched.lastResponse.requestId).not.toBe(created.lastResponse.requestId)

    const updated = await client.pets.update(
      created.id,
      { name: 'Thomas', breed: 'tabby', species: null },
      { ifMatch: fetched.lastResponse.etag! },
    )
    expect(updated).toMatchObject({
      id: created.id,
      name: 'Thomas',
      breed: 'tabby',
      species: null,
      version: 2,
    })

    const stale = await client.pets.update(created.id, { name: 'Tommy' }, { ifMatch: '"1"' }).catch((e) => e)
    expect(stale).toBeInstanceOf(ConflictError)
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed' })

    const deleted = await client.pets.delete(created.id)
    expect(deleted).toMatchObject({ id: created.id, object: 'pet', deleted: true })
    await expect(client.pets.get(created.id)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('awaits a list for one page and iterates it with for await over every page', async () => {
    const { apiKey: ownKey } = await live.newAccount()
    const own = new PetService({ apiKey: ownKey, baseUrl: live.url })
    const ids: number[] = []
    for (let i = 0; i < 23; i++) ids.push((await own.pets.create({ name: `Pet ${i}`, species: 'dog' })).id)

    const page = await own.pets.list({ limit: 10 })
    expect(page.data).toHaveLength(10)
    expect(page.has_more).toBe(true)
    expect(page.data[0]!.id).toBe(ids.at(-1)) // newest first
    expect(page.lastResponse.requestId).toMatch(/^req_/)

    const all: Pet[] = []
    for await (const pet of own.pets.list({ limit: 10, species: 'dog' })) all.push(pet)
    expect(all.map((p) => p.id)).toEqual([...ids].reverse())

    const next = await own.pets.list({ limit: 10, starting_after: page.data.at(-1)!.id })
    expect(next.data[0]!.id).toBe(ids.at(-11))
    expect(await own.pets.list({ limit: 5 }).toArray({ limit: 7 })).toHaveLength(7)
    // Started with ending_before, iteration walks towards newer pets, nearest first.
    const newer: number[] = []
    for await (const pet of own.pets.list({ limit: 4, ending_before: ids[15]! })) newer.push(pet.id)
    expect(newer).toEqual(ids.slice(16))
    expect((await own.pets.list({ species: 'cat' })).data).toEqual([])
  })

  it('manages users: create, get, update, list, and refuses to delete one who owns pets', async () => {
    const { apiKey: ownKey } = await live.newAccount()
    const own = new PetService({ apiKey: ownKey, baseUrl: live.url })
    const user = await own.users.create({
      name: 'Bob',
      username: 'bob',
      email: 'bob@example.com',
      phone: '+44 20 7946 0000',
    })
    expect(user).toMatchObject({ object: 'user', name: 'Bob', username: 'bob', email: 'bob@example.com' })
    const taken = await own.users.create({ name: 'Other Bob', username: 'bob' }).catch((e) => e)
    expect(taken).toBeInstanceOf(ConflictError)
    expect(taken.code).toBe('username_taken')
    expect(user.id).toMatch(/^usr_/)
    expect(await own.users.get(user.id)).toEqual({ ...user })
    expect(await own.users.update(user.id, { phone: null })).toMatchObject({ phone: null, version: 2 })
    const second = await own.users.create({ name: 'Cy' })
    const listed: string[] = []
    for await (const u of own.users.list({ limit: 1 })) listed.push(u.id)
    expect(listed).toEqual([second.id, user.id])

    const pet = await own.pets.create({ name: 'Rex', owner_id: user.id })
    const refused = await own.users.delete(user.id).catch((e) => e)
    expect(refused).toBeInstanceOf(ConflictError)
    expect(refused.code).toBe('user_has_pets')
    await own.pets.delete(pet.id)
    expect(await own.users.delete(user.id)).toMatchObject({ id: user.id, deleted: true })
    await expect(own.users.get(user.id)).rejects.toMatchObject({ status: 404, code: 'user_not_found' })
  })

  it('manages orders: create, get, update, list, delete, and refuses a pet of another account', async () => {
    const { apiKey: ownKey } = await live.newAccount()
    const own = new PetService({ apiKey: ownKey, baseUrl: live.url })
    const pet = await own.pets.create({ name: 'Rex' })
    const order = await own.orders.create({ pet_id: pet.id, quantity: 2, ship_date: '2026-12-24T18:00:00Z' })
    expect(order).toMatchObject({
      object: 'order',
      pet_id: pet.id,
      quantity: 2,
      status: 'placed',
      complete: false,
    })
    expect(order.lastResponse.etag).toBe('"1"')
    expect(await own.orders.get(order.id)).toEqual({ ...order })
    const updated = await own.orders.update(order.id, {
      status: 'delivered',
      complete: true,
      ship_date: null,
    })
    expect(updated).toMatchObject({ status: 'delivered', complete: true, ship_date: null, version: 2 })
    const second = await own.orders.create({ pet_id: pet.id })
    const listed: number[] = []
    for await (const o of own.orders.list({ limit: 1 })) listed.push(o.id)
    expect(listed).toEqual([second.id, order.id])
    const foreign = await own.orders.create({ pet_id: pet.id + 1_000_000 }).catch((e) => e)
    expect(foreign).toBeInstanceOf(InvalidRequestError)
    expect(foreign).toMatchObject({ code: 'order_pet_not_found', param: 'pet_id' })
    await expect(client.orders.get(order.id)).rejects.toBeInstanceOf(NotFoundError)
    expect(await own.orders.delete(order.id)).toMatchObject({ id: order.id, object: 'order', deleted: true })
    await expect(own.orders.get(order.id)).rejects.toMatchObject({ status: 404, code: 'order_not_found' })
  })

  it('finds a failed request in the request logs by its request id, and reads it', async () => {
    const failed = await client.pets.create({ name: '' }).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(InvalidRequestError)
    const requestId = (failed as InvalidRequestError).requestId!
    await live.app.deps.requestLogs.flush()
    const page = await client.requestLogs.list({ request_id: requestId, status_class: '4xx' })
    expect(page.data.map((e) => e.request_id)).toEqual([requestId])
    const entry = await client.requestLogs.get(page.data[0]!.id)
    expect(entry).toMatchObject({
      method: 'POST',
      path: '/v1/pet',
      status: 400,
      error_code: 'parameter_invalid',
    })
    expect(JSON.parse(entry.request_body!)).toEqual({ name: '' })
    // Pages of one, followed by `for await`.
    for (const name of ['', '']) await client.pets.create({ name }).catch(() => undefined)
    await live.app.deps.requestLogs.flush()
    const seen: number[] = []
    for await (const e of client.requestLogs.list({ limit: 1, method: 'POST', status_class: '4xx' }))
      seen.push(e.status)
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(new Set(seen)).toEqual(new Set([400]))
    await expect(client.requestLogs.get('rlog_missing')).rejects.toBeInstanceOf(NotFoundError)
  })

  it('raises InvalidRequestError with code, param, detail and request id', async () => {
    const error = await client.pets.create({ name: '' }).catch((e) => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toBeInstanceOf(PetServiceError)
    expect(error).toMatchObject({ status: 400, code: 'parameter_invalid', param: 'name' })
    expect(error.detail).toContain('name')
    expect(error.requestId).toMatch(/^req_/)
    expect(error.message).toContain(error.requestId)

    const unknownOwner = await client.pets.create({ name: 'Rex', owner_id: 'usr_nobody' }).catch((e) => e)
    expect(unknownOwner).toBeInstanceOf(InvalidRequestError)
    expect(unknownOwner).toMatchObject({ code: 'owner_not_found', param: 'owner_id' })
  })

  it('raises AuthenticationError for a missing or unknown key', async () => {
    const anonymous = new PetService({ baseUrl: live.url })
    await expect(anonymous.pets.list()).rejects.toMatchObject({
      name: 'AuthenticationError',
      status: 401,
      code: 'api_key_missing',
    })
    const wrong = new PetService({ apiKey: 'pet_sk_not_a_real_key', baseUrl: live.url })
    const error = await wrong.pets.get(1).catch((e) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error.code).toBe('api_key_invalid')
  })

  it('raises PermissionError when the key lacks the scope', async () => {
    const { apiKey: readOnly } = await live.newAccount({ scopes: ['read:pets'] })
    const limited = new PetService({ apiKey: readOnly, baseUrl: live.url })
    expect((await limited.pets.list()).data).toEqual([])
    const error = await limited.pets.create({ name: 'Rex' }).catch((e) => e)
    expect(error).toBeInstanceOf(PermissionError)
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope' })
  })

  it('raises NotFoundError and ConflictError (a sold pet cannot go back)', async () => {
    await expect(client.pets.get(987_654)).rejects.toMatchObject({
      name: 'NotFoundError',
      code: 'pet_not_found',
    })
    const pet = await client.pets.create({ name: 'Sold', status: 'sold' })
    const error = await client.pets.update(pet.id, { status: 'available' }).catch((e) => e)
    expect(error).toBeInstanceOf(ConflictError)
    expect(error).toMatchObject({ status: 409, code: 'invalid_status_transition' })
  })

  it('raises RateLimitError with retryAfter from a rate-limited service when retries are off', async () => {
    const limited = await startLiveServer({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '2' })
    try {
      const key = (await limited.newAccount()).apiKey
      const noRetry = new PetService({ apiKey: key, baseUrl: limited.url, maxRetries: 0 })
      let error: unknown
      // The bucket holds 2 and refills 1 a second: a few quick calls always run it dry.
      for (let i = 0; i < 10 && error === undefined; i++)
        error = await noRetry.pets.list().then(
          () => undefined,
          (e) => e,
        )
      expect(error).toBeInstanceOf(RateLimitError)
      expect(error).toMatchObject({ status: 429, code: 'rate_limited' })
      expect((error as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1)
    } finally {
      await limited.close()
    }
  })

  it('waits as long as Retry-After says before retrying a 429', async () => {
    const proxy = await startProxy(live.url, (n) =>
      n === 0
        ? {
            kind: 'answer',
            status: 429,
            headers: { 'retry-after': '1' },
            body: { status: 429, code: 'rate_limited' },
          }
        : { kind: 'forward' },
    )
    try {
      const patient = new PetService({ apiKey, baseUrl: proxy.url })
      const started = Date.now()
      expect((await patient.pets.list()).object).toBe('list')
      // A lower bound only: it waited for the window the service named rather than its own backoff.
      expect(Date.now() - started).toBeGreaterThanOrEqual(950)
      expect(proxy.seen).toHaveLength(2)
    } finally {
      await proxy.close()
    }
  })

  it('raises ServerError for a 5xx once retries are used up', async () => {
    const proxy = await startProxy(live.url, () => serverError(500))
    try {
      const flaky = new PetService({ apiKey, baseUrl: proxy.url, maxRetries: 1 })
      const error = await flaky.pets.list().catch((e) => e)
      expect(error).toBeInstanceOf(ServerError)
      expect(error).toMatchObject({ status: 500, code: 'service_unavailable' })
      expect(proxy.seen).toHaveLength(2)
    } finally {
      await proxy.close()
    }
  })

  it('raises ConnectionError when nothing listens', async () => {
    const proxy = await startProxy(live.url, () => ({ kind: 'reset' }))
    const url = proxy.url
    await proxy.close()
    const nowhere = new PetService({ apiKey, baseUrl: url, maxRetries: 1 })
    const error = await nowhere.pets.list().catch((e) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).not.toBeInstanceOf(TimeoutError)
    expect(error.status).toBeUndefined()
    expect(error.message).toContain('Could not reach')
  })

  it('raises TimeoutError when the answer takes longer than the timeout', async () => {
    const proxy = await startProxy(live.url, () => ({ kind: 'forward', delayMs: 800 }))
    try {
      const slow = new PetService({ apiKey, baseUrl: proxy.url, timeout: 200, maxRetries: 0 })
      const error = await slow.pets.list().catch((e) => e)
      expect(error).toBeInstanceOf(TimeoutError)
      expect(error).toBeInstanceOf(ConnectionError)
      expect(error.message).toContain('200 ms')
      // A per-call timeout overrides the client's.
      const page = await new PetService({ apiKey, baseUrl: proxy.url, timeout: 200 }).pets
        .list({}, { timeout: 5_000, maxRetries: 0 })
        .catch((e) => e)
      expect(page.object).toBe('list')
    } finally {
      await proxy.close()
    }
  })
})
