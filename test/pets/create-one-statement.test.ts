import { sql } from 'kysely'
import { beforeAll, expect, it } from 'vitest'
import type { Db } from '../../src/db/schema.ts'
import { keyClaimArgs } from '../../src/idempotency/key-claim-statement.ts'
import type { Pet } from '../../src/pets/pet.ts'
import { toPetV1 } from '../../src/pets/pet-views.ts'
import { insertPet } from '../../src/pets/pets-repository.ts'
import { createPetClaimingKey, findPet } from '../../src/pets/pets-service.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'
import { whileEventsRefused } from '../helpers/refused-events.ts'
import { recordStatements } from '../helpers/statements.ts'

/**
 * Pet creates (POST /v1/pet, POST /v2/pet without an id): on PostgreSQL one statement writes the
 * pet and its pet.created event (insertPetWithEvent, src/pets/pets-repository.ts), and with an
 * Idempotency-Key also claims the key and stores the response (insertPetClaimingKey); on SQLite
 * a transaction does. Either way the event is written exactly when the pet is, and stores the
 * pet as v1 shows it.
 */
describeDb('pet creates: the pet and its event in one write', () => {
  let call: ReturnType<typeof withKey>
  let accountId: string

  const t = useTestApp()
  beforeAll(async () => {
    const account = await t.newAccount()
    accountId = account.accountId
    call = withKey(t.app, account.apiKey)
  })

  async function counts() {
    const pets = await t.database.db
      .selectFrom('pets')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    const events = await t.database.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    return { pets: Number(pets.n), events: Number(events.n) }
  }

  it('stores the pet.created event as the pet is read back, byte for byte (v1 and v2 creates)', async () => {
    const owner = await call({ method: 'POST', url: '/v1/user', payload: { name: 'Ann' } })
    expect(owner.statusCode, owner.body).toBe(201)
    const v1 = await call({
      method: 'POST',
      url: '/v1/pet',
      payload: { name: 'Rex "the dog" é', species: 'dog', status: 'pending', owner_id: owner.json().id },
    })
    expect(v1.statusCode, v1.body).toBe(201)

    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const v2 = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(token),
      payload: {
        name: 'Tom',
        photoUrls: ['https://example.com/a.jpg'],
        category: { id: 3, name: 'Cats' },
        tags: [{ id: 1, name: 'grey' }, { name: 'old' }],
      },
    })
    expect(v2.statusCode, v2.body).toBe(200)

    for (const [account, id, caller] of [
      [accountId, v1.json().id as number, call],
      [client.accountId, v2.json().id as number, withKey(t.app, client.apiKey)],
    ] as const) {
      const [event] = await t.database.db
        .selectFrom('events')
        .select(['type', 'data', 'created_at'])
        .where('account_id', '=', account)
        .where('object_id', '=', String(id))
        .execute()
      expect(event?.type).toBe('pet.created')
      const got = await caller({ method: 'GET', url: `/v1/pet/${id}` })
      expect(got.statusCode, got.body).toBe(200)
      expect(JSON.parse(event!.data)).toEqual(got.json())
      // What the transactional path stores: JSON.stringify of the stored pet's v1 view.
      const pet = await findPet(t.database.db, account, id)
      expect(event!.data).toBe(JSON.stringify(toPetV1(pet!)))
      expect(event!.created_at).toBe(pet!.createdAt)
    }
  })

  it('answers owner_not_found for an unknown owner, and writes neither pet nor event', async () => {
    const before = await counts()
    const res = await call({
      method: 'POST',
      url: '/v1/pet',
      ...form({ name: 'Rex', owner_id: 'usr_missing' }),
    })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'owner_not_found',
      param: 'owner_id',
      detail: 'owner_id "usr_missing" is not a user of your account; create the user first.',
    })
    expect(await counts()).toEqual(before)
  })

  it('moves past an id a client chose, with one event per pet', async () => {
    const client = await newClient(t)
    const token = await accessToken(t.app, client)
    const v2 = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/v2/pet', headers: bearer(token), payload })
    const first = await v2({ name: 'first', photoUrls: [] })
    expect(first.statusCode, first.body).toBe(200)
    const next = (first.json() as { id: number }).id + 1
    // The id the account's reserved block hands out next, taken by a client first.
    const chosen = await v2({ id: next, name: 'chosen', photoUrls: [] })
    expect(chosen.statusCode, chosen.body).toBe(200)
    // With an Idempotency-Key the pet's insert, the key's claim and the event are one statement
    // on PostgreSQL: the taken id undoes the claim with it, and the next id is tried.
    const keyedCreate = () =>
      t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: { ...bearer(token), 'idempotency-key': `past-chosen-${client.accountId}` },
        payload: { name: 'keyed', photoUrls: [] },
      })
    const keyed = await keyedCreate()
    expect(keyed.statusCode, keyed.body).toBe(200)
    const keyedId = (keyed.json() as { id: number }).id
    expect(keyedId).toBeGreaterThan(next)
    const replay = await keyedCreate()
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(keyed.body)
    // And without a key.
    const takenNext = await v2({ id: keyedId + 1, name: 'chosen too', photoUrls: [] })
    expect(takenNext.statusCode, takenNext.body).toBe(200)
    const assigned = await v2({ name: 'assigned', photoUrls: [] })
    expect(assigned.statusCode, assigned.body).toBe(200)
    const id = (assigned.json() as { id: number }).id
    expect(id).toBeGreaterThan(keyedId + 1)

    const events = await t.database.db
      .selectFrom('events')
      .select(['object_id', 'data'])
      .where('account_id', '=', client.accountId)
      .where('type', '=', 'pet.created')
      .orderBy('seq')
      .execute()
    expect(events.map((e) => [Number(e.object_id), (JSON.parse(e.data) as { name: string }).name])).toEqual([
      [next - 1, 'first'],
      [next, 'chosen'],
      [keyedId, 'keyed'],
      [keyedId + 1, 'chosen too'],
      [id, 'assigned'],
    ])
  })

  it('leaves no pet and no event when the event cannot be written', async () => {
    // Events naming a "Poison" pet are refused, so the create fails after its pet insert.
    await whileEventsRefused(t.database, { word: 'Poison' }, async () => {
      const before = await counts()
      const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Poison' }) })
      expect(res.statusCode, res.body).toBe(500)
      expect(await counts()).toEqual(before)
      const named = await t.database.db
        .selectFrom('pets')
        .select('id')
        .where('account_id', '=', accountId)
        .where('name', '=', 'Poison')
        .execute()
      expect(named).toEqual([])
    })
  })

  // Skipped on SQLite: the one-statement create is PostgreSQL's (SQLite has no data-modifying
  // WITH, and keeps its transaction, shared by its group commit).
  it.runIf(DIALECT === 'postgres')(
    'sends one statement for a create without an Idempotency-Key (no BEGIN, no COMMIT)',
    async () => {
      const statements = recordStatements(t.database.pool!)
      // The first create reserves the account's block of ids (src/db/account-ids.ts).
      await call({ method: 'POST', url: '/v1/pet', ...form({ name: 'warm-up' }) })
      const owner = await call({ method: 'POST', url: '/v1/user', payload: { name: 'Bo' } })
      expect(owner.statusCode, owner.body).toBe(201)
      const client = await newClient(t)
      const token = await accessToken(t.app, client)
      await t.app.inject({
        method: 'POST',
        url: '/v2/pet',
        headers: bearer(token),
        payload: { name: 'warm-up', photoUrls: [] },
      })

      for (const create of [
        () => call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex' }) }),
        () => call({ method: 'POST', url: '/v1/pet', ...form({ name: 'Rex', owner_id: owner.json().id }) }),
        () =>
          t.app.inject({
            method: 'POST',
            url: '/v2/pet',
            headers: bearer(token),
            payload: { name: 'Tom', photoUrls: [] },
          }),
      ]) {
        statements.length = 0
        const res = await create()
        expect(res.statusCode, res.body).toBeLessThan(300)
        expect(statements, statements.join('\n')).toHaveLength(1)
        expect(statements[0]).toMatch(/^with "inserted_pet" as \(insert into "pets"/)
      }

      // Still one, when the owner is missing: the answer tells it from a taken id.
      statements.length = 0
      const missing = await call({
        method: 'POST',
        url: '/v1/pet',
        ...form({ name: 'Rex', owner_id: 'usr_gone' }),
      })
      expect(missing.statusCode, missing.body).toBe(400)
      expect(statements).toHaveLength(1)

      // With a key, v1 and v2, with and without an owner: still one statement, which also
      // claims the key and stores the response.
      const key = `one-trip-${Date.now()}`
      for (const keyed of [
        () =>
          call({
            method: 'POST',
            url: '/v1/pet',
            payload: { name: 'Rex' },
            headers: { 'idempotency-key': `${key}-v1` },
          }),
        () =>
          call({
            method: 'POST',
            url: '/v1/pet',
            payload: { name: 'Rex', owner_id: owner.json().id },
            headers: { 'idempotency-key': `${key}-v1-owner` },
          }),
        () =>
          t.app.inject({
            method: 'POST',
            url: '/v2/pet',
            headers: { ...bearer(token), 'idempotency-key': `${key}-v2` },
            payload: { name: 'Tom', photoUrls: [] },
          }),
      ]) {
        statements.length = 0
        const res = await keyed()
        expect(res.statusCode, res.body).toBeLessThan(300)
        expect(statements, statements.join('\n')).toHaveLength(1)
        expect(statements[0]).toMatch(
          /^with "key_lock_timeout_before" as .* "inserted_pet" as \(insert into "pets"/,
        )
        // The replay is the stored response: the one answered, byte for byte.
        const replay = await keyed()
        expect(replay.headers['idempotent-replayed']).toBe('true')
        expect(replay.body).toBe(res.body)
        expect(replay.headers.location).toBe(res.headers.location)
        expect(replay.headers.etag).toBe(res.headers.etag)
      }
    },
  )

  // Skipped on SQLite, which has neither lock_timeout nor the one-statement keyed create.
  it.runIf(DIALECT === 'postgres')(
    "bounds only the key's claim by its lock_timeout: the pet's insert waits as without a key, and the setting is back after",
    async () => {
      const setting = async (db: Db) =>
        (await sql<{ lock_timeout: string }>`show lock_timeout`.execute(db)).rows[0]?.lock_timeout
      const before = await setting(t.database.db)
      const id = await t.database.ids.reserve(accountId, 'pet')
      const key = {
        argsFor: (pet: Pet) =>
          keyClaimArgs(
            {
              accountId,
              key: `setting-${Date.now()}`,
              fingerprint: 'f',
              at: new Date().toISOString(),
              expiredBefore: new Date(0).toISOString(),
              lockTimeoutMs: 200,
            },
            { status: 201, headers: {}, body: pet.id },
          ),
      }
      // Another transaction inserts a pet with the very id and holds it for a second before it
      // rolls back: the create's insert waits on it (a unique index), longer than the claim's 200 ms.
      let inserted!: () => void
      const insertedNow = new Promise<void>((resolve) => {
        inserted = resolve
      })
      const holding = t.database.db
        .transaction()
        .execute(async (trx) => {
          await insertPet(
            trx,
            accountId,
            id.id,
            { name: 'Holder', status: 'available' },
            new Date().toISOString(),
          )
          inserted()
          await new Promise((resolve) => setTimeout(resolve, 1000))
          throw new Error('roll back')
        })
        .catch(() => undefined)
      await insertedNow
      const startedAt = Date.now()
      const { pet, after } = await t.database.db.connection().execute(async (connection) => ({
        pet: await createPetClaimingKey(connection, accountId, { name: 'Waited' }, id, key),
        after: await setting(connection),
      }))
      await holding
      expect(pet).toMatchObject({ id: id.id, name: 'Waited' })
      expect(Date.now() - startedAt).toBeGreaterThan(500)
      expect(after).toBe(before)
    },
  )
})
