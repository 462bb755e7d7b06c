import { afterAll, beforeAll, expect, it } from 'vitest'
import { ConnectionError, PetService, ServerError } from '../../clients/typescript/src/index.ts'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { serverError, startProxy } from '../helpers/misbehaving-proxy.ts'

// Retries against the real service behind a proxy that fails on purpose. Every POST carries an
// Idempotency-Key, so however many times a create is sent, one pet exists afterwards.
describeDb('TypeScript client retries', () => {
  let live: LiveServer

  beforeAll(async () => {
    live = await startLiveServer()
  })
  afterAll(() => live.close())

  async function freshClient(baseUrl: string, options: { timeout?: number; maxRetries?: number } = {}) {
    const { apiKey } = await live.newAccount()
    return {
      client: new PetService({ apiKey, baseUrl, ...options }),
      direct: new PetService({ apiKey, baseUrl: live.url }),
    }
  }

  it('retries a create that fails twice with 503 and creates exactly one pet', async () => {
    const proxy = await startProxy(live.url, (n) => (n < 2 ? serverError(503) : { kind: 'forward' }))
    try {
      const { client, direct } = await freshClient(proxy.url)
      const pet = await client.pets.create({ name: 'Rex', species: 'dog' })
      expect(pet.name).toBe('Rex')
      expect(proxy.seen).toHaveLength(3)
      const keys = proxy.seen.map((r) => r.headers['idempotency-key'])
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(new Set(keys).size).toBe(1)
      expect((await direct.pets.list()).data.map((p) => p.id)).toEqual([pet.id])
    } finally {
      await proxy.close()
    }
  })

  it('retries a create whose first answer was lost (connection reset after the service created it): one pet', async () => {
    // The first attempt reaches the service, which creates the pet, but its answer never comes
    // back (the client times out); the retry with the same key gets the stored answer replayed.
    const proxy = await startProxy(live.url, (n) =>
      n === 0 ? { kind: 'forward', delayMs: 1_000 } : { kind: 'forward' },
    )
    try {
      const { client, direct } = await freshClient(proxy.url, { timeout: 300 })
      const pet = await client.pets.create({ name: 'Once' })
      expect(proxy.seen.length).toBeGreaterThanOrEqual(2)
      expect(new Set(proxy.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1)
      const all = await direct.pets.list()
      expect(all.data.map((p) => p.id)).toEqual([pet.id])
    } finally {
      await proxy.close()
    }
  })

  it('uses the caller’s idempotency key, so a repeated call replays the first pet', async () => {
    const { direct } = await freshClient(live.url)
    const first = await direct.pets.create({ name: 'Rex' }, { idempotencyKey: 'order-42' })
    const again = await direct.pets.create({ name: 'Rex' }, { idempotencyKey: 'order-42' })
    expect(again.id).toBe(first.id)
    expect(again.lastResponse.headers.get('idempotent-replayed')).toBe('true')
    expect((await direct.pets.list()).data).toHaveLength(1)
  })

  it('retries 409 idempotency_request_in_progress, but not other conflicts', async () => {
    const inProgress = {
      kind: 'answer' as const,
      status: 409,
      headers: { 'retry-after': '0' },
      body: { status: 409, code: 'idempotency_request_in_progress', detail: 'still running' },
    }
    let answered = 0
    const proxy = await startProxy(live.url, () => (answered++ === 0 ? inProgress : { kind: 'forward' }))
    try {
      const { client, direct } = await freshClient(proxy.url)
      const pet = await client.pets.create({ name: 'Rex' })
      expect(proxy.seen).toHaveLength(2)
      const sold = await direct.pets.update(pet.id, { status: 'sold' })
      proxy.seen.length = 0
      await expect(client.pets.update(sold.id, { status: 'available' })).rejects.toMatchObject({
        code: 'invalid_status_transition',
      })
      expect(proxy.seen).toHaveLength(1)
    } finally {
      await proxy.close()
    }
  })

  it('retries network errors for GET and POST, but never re-sends a PATCH whose fate is unknown', async () => {
    let failNext = true
    const proxy = await startProxy(live.url, () => {
      if (failNext) {
        failNext = false
        return { kind: 'reset' }
      }
      return { kind: 'forward' }
    })
    try {
      const { client, direct } = await freshClient(proxy.url)
      const pet = await client.pets.create({ name: 'Rex' })
      expect(proxy.seen).toHaveLength(2)
      failNext = true
      expect((await client.pets.get(pet.id)).id).toBe(pet.id)
      expect(proxy.seen).toHaveLength(4)
      failNext = true
      await expect(client.pets.update(pet.id, { name: 'Max' })).rejects.toBeInstanceOf(ConnectionError)
      expect(proxy.seen).toHaveLength(5)
      expect((await direct.pets.list()).data).toHaveLength(1)
    } finally {
      await proxy.close()
    }
  })

  it('stops after maxRetries (per call) and does not retry when it is 0', async () => {
    const proxy = await startProxy(live.url, () => serverError(502))
    try {
      const { client } = await freshClient(proxy.url, { maxRetries: 3 })
      await expect(client.pets.list()).rejects.toBeInstanceOf(ServerError)
      expect(proxy.seen).toHaveLength(4)
      proxy.seen.length = 0
      await expect(client.pets.list({}, { maxRetries: 0 })).rejects.toBeInstanceOf(ServerError)
      expect(proxy.seen).toHaveLength(1)
    } finally {
      await proxy.close()
    }
  })
})
