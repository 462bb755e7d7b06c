import { beforeAll, expect, it } from 'vitest'
import { requestFingerprint } from '../../src/idempotency/idempotency.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('Idempotency-Key on POST', () => {
  let call: ReturnType<typeof withKey>
  let accountId: string

  const t = useTestApp()
  beforeAll(async () => {
    const account = await t.newAccount()
    accountId = account.accountId
    call = withKey(t.app, account.apiKey)
  })

  const post = (key: string, fields: Record<string, string>) => {
    const f = form(fields)
    return call({
      method: 'POST',
      url: '/v1/pet',
      payload: f.payload,
      headers: { ...f.headers, 'idempotency-key': key },
    })
  }
  const countPets = async (name: string) =>
    (
      await t.database.db
        .selectFrom('pets')
        .select('id')
        .where('account_id', '=', accountId)
        .where('name', '=', name)
        .execute()
    ).length

  it('replays the first response for a retry with the same key and parameters, creating one pet', async () => {
    const first = await post('retry-1', { name: 'Once', species: 'dog' })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const again = await post('retry-1', { name: 'Once', species: 'dog' })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(again.headers.location).toBe(first.headers.location)
    expect(await countPets('Once')).toBe(1)
  })

  it('treats the same parameters sent as JSON as the same request', async () => {
    await post('retry-json', { name: 'Jason' })
    const asJson = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: { name: 'Jason' },
      headers: { 'idempotency-key': 'retry-json' },
    })
    expect(asJson.headers['idempotent-replayed']).toBe('true')
    expect(await countPets('Jason')).toBe(1)
  })

  it('refuses the same key with other parameters (422) and changes nothing', async () => {
    await post('reuse-1', { name: 'First' })
    const res = await post('reuse-1', { name: 'Second' })
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' })
    expect(await countPets('Second')).toBe(0)
  })

  it('creates exactly one pet when the same request races itself', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => post('race-1', { name: 'Racer' })))
    const statuses = results.map((r) => r.statusCode)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    const ids = new Set(results.filter((r) => r.statusCode === 201).map((r) => r.json().id))
    expect(ids.size).toBe(1)
    expect(await countPets('Racer')).toBe(1)
    const conflict = results.find((r) => r.statusCode === 409)
    if (conflict !== undefined) expect(conflict.json().code).toBe('idempotency_request_in_progress')
  })

  it('does not keep a failed request, so the key can be retried once the cause is fixed', async () => {
    const failed = await post('fix-then-retry', { name: 'Owned', owner_id: 'usr_missing' })
    expect(failed.statusCode).toBe(400)
    const user = (await call({ method: 'POST', url: '/v1/user', ...form({ name: 'Owner' }) })).json()
    const retried = await post('fix-then-retry', { name: 'Owned', owner_id: user.id })
    // Nothing was stored for the failed attempt, so the corrected request may use the same key.
    expect(retried.statusCode).toBe(201)
    expect(retried.json().owner_id).toBe(user.id)
  })

  it('takes over a key whose stored response has expired (24 h), creating afresh', async () => {
    const first = await post('expired-1', { name: 'Old' })
    expect(first.statusCode).toBe(201)
    const dayAndAnHourAgo = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString()
    await t.database.db
      .updateTable('idempotency_keys')
      .set({ created_at: dayAndAnHourAgo, locked_until: dayAndAnHourAgo })
      .where('account_id', '=', accountId)
      .where('key', '=', 'expired-1')
      .execute()
    // Other parameters too: the expired key no longer binds them.
    const fresh = await post('expired-1', { name: 'New' })
    expect(fresh.statusCode, fresh.body).toBe(201)
    expect(fresh.headers['idempotent-replayed']).toBeUndefined()
    expect(fresh.json().id).not.toBe(first.json().id)
    const replay = await post('expired-1', { name: 'New' })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(fresh.json())
    expect(await countPets('New')).toBe(1)
  })

  it('takes over a claim left running by a version before 2026-11-23 once its lease passed', async () => {
    const past = new Date(Date.now() - 60_000).toISOString()
    const future = new Date(Date.now() + 60_000).toISOString()
    const request_hash = requestFingerprint('POST', '/v1/pet', { name: 'Leased' })
    const leftRunning = { request_hash, state: 'running' as const, created_at: past }
    await t.database.db
      .insertInto('idempotency_keys')
      .values([
        { account_id: accountId, key: 'lease-passed', ...leftRunning, locked_until: past },
        { account_id: accountId, key: 'lease-held', ...leftRunning, locked_until: future },
      ])
      .execute()
    const taken = await post('lease-passed', { name: 'Leased' })
    expect(taken.statusCode, taken.body).toBe(201)
    const held = await post('lease-held', { name: 'Leased' })
    expect(held.statusCode, held.body).toBe(409)
    expect(held.json().code).toBe('idempotency_request_in_progress')
    expect(await countPets('Leased')).toBe(1)
  })

  it('keeps keys apart between accounts', async () => {
    const other = withKey(t.app, (await t.newAccount()).apiKey)
    await post('shared-key', { name: 'Mine' })
    const f = form({ name: 'Theirs' })
    const res = await other({
      method: 'POST',
      url: '/v1/pet',
      payload: f.payload,
      headers: { ...f.headers, 'idempotency-key': 'shared-key' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json().name).toBe('Theirs')
  })

  it('refuses a malformed key', async () => {
    const res = await post('x'.repeat(256), { name: 'Long' })
    expect(res.statusCode).toBe(400)
    expect(res.json().param).toBe('Idempotency-Key')
  })
})
