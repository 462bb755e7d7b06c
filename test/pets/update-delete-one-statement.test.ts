import { beforeAll, expect, it } from 'vitest'
import { toPetV1 } from '../../src/pets/pet-views.ts'
import { findPet } from '../../src/pets/pets-service.ts'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'
import { whileEventsRefused } from '../helpers/refused-events.ts'
import { recordStatements } from '../helpers/statements.ts'

/**
 * Pet updates and deletes (PATCH and DELETE /v1/pet/{id}, PUT /v2/pet, POST and DELETE
 * /v2/pet/{petId}): on PostgreSQL the write and its event are one statement after the read
 * (updatePetWithEvent and deletePetWithEvent, src/pets/pets-repository.ts), with no transaction
 * around them (src/db/atomic-write.ts); on SQLite a transaction holds the same steps. Either
 * way the event exists exactly when the change does.
 */
describeDb('pet updates and deletes: the change and its event in one write', () => {
  let call: ReturnType<typeof withKey>
  let accountId: string

  const t = useTestApp()
  beforeAll(async () => {
    const account = await t.newAccount()
    accountId = account.accountId
    call = withKey(t.app, account.apiKey)
  })

  async function newPet(name = 'Rex'): Promise<number> {
    const res = await call({ method: 'POST', url: '/v1/pet', ...form({ name, species: 'dog' }) })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as number
  }

  async function eventsOf(id: number) {
    return t.database.db
      .selectFrom('events')
      .select(['type', 'data', 'previous_attributes', 'created_at'])
      .where('account_id', '=', accountId)
      .where('object_id', '=', String(id))
      .orderBy('seq')
      .execute()
  }

  it('stores pet.updated as the pet is read back, with the attributes it had before', async () => {
    const id = await newPet()
    const owner = await call({ method: 'POST', url: '/v1/user', payload: { name: 'Ann' } })
    expect(owner.statusCode, owner.body).toBe(201)
    const patched = await call({
      method: 'PATCH',
      url: `/v1/pet/${id}`,
      ...form({ breed: 'collie "the" é', status: 'pending', owner_id: owner.json().id }),
    })
    expect(patched.statusCode, patched.body).toBe(200)

    const [, updated] = await eventsOf(id)
    expect(updated?.type).toBe('pet.updated')
    const got = await call({ method: 'GET', url: `/v1/pet/${id}` })
    expect(JSON.parse(updated!.data)).toEqual(got.json())
    // What the transactional path stores: JSON.stringify of the stored pet's v1 view.
    const pet = await findPet(t.database.db, accountId, id)
    expect(updated!.data).toBe(JSON.stringify(toPetV1(pet!)))
    expect(updated!.created_at).toBe(pet!.updatedAt)
    expect(JSON.parse(updated!.previous_attributes!)).toEqual({
      breed: null,
      status: 'available',
      owner_id: null,
    })
    expect(patched.json()).toEqual(got.json())
  })

  it('answers owner_not_found for an unknown owner, and changes neither the pet nor the events', async () => {
    const id = await newPet()
    const before = await call({ method: 'GET', url: `/v1/pet/${id}` })
    const res = await call({
      method: 'PATCH',
      url: `/v1/pet/${id}`,
      ...form({ name: 'Renamed', owner_id: 'usr_missing' }),
    })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({ code: 'owner_not_found', param: 'owner_id' })
    expect((await call({ method: 'GET', url: `/v1/pet/${id}` })).json()).toEqual(before.json())
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['pet.created'])
  })

  it('stores pet.deleted with the pet as it was, once', async () => {
    const id = await newPet('Gone')
    const before = (await call({ method: 'GET', url: `/v1/pet/${id}` })).json()
    expect((await call({ method: 'DELETE', url: `/v1/pet/${id}` })).statusCode).toBe(200)
    expect((await call({ method: 'DELETE', url: `/v1/pet/${id}` })).statusCode).toBe(404)
    const events = await eventsOf(id)
    expect(events.map((e) => e.type)).toEqual(['pet.created', 'pet.deleted'])
    expect(JSON.parse(events[1]!.data)).toEqual(before)
  })

  it('leaves the pet as it was when the event cannot be written (update and delete)', async () => {
    const id = await newPet('Safe')
    // Events naming a "Poison" pet are refused, so the change fails with its event.
    await whileEventsRefused(t.database, { word: 'Poison' }, async () => {
      const renamed = await call({ method: 'PATCH', url: `/v1/pet/${id}`, ...form({ name: 'Poison' }) })
      expect(renamed.statusCode, renamed.body).toBe(500)
      const pet = await findPet(t.database.db, accountId, id)
      expect(pet).toMatchObject({ name: 'Safe', version: 1 })
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(['pet.created'])
    })
    const poisoned = await newPet('Poison pill')
    // Now the deletion's event is refused: it carries the pet's name.
    await whileEventsRefused(t.database, { word: 'Poison', type: 'pet.deleted' }, async () => {
      const deleted = await call({ method: 'DELETE', url: `/v1/pet/${poisoned}` })
      expect(deleted.statusCode, deleted.body).toBe(500)
      expect(await findPet(t.database.db, accountId, poisoned)).toMatchObject({ name: 'Poison pill' })
      expect((await eventsOf(poisoned)).map((e) => e.type)).toEqual(['pet.created'])
    })
  })

  // Skipped on SQLite, which has no data-modifying WITH and keeps its transaction (its steps are
  // the tests above): the statement count is PostgreSQL's.
  it.runIf(DIALECT === 'postgres')(
    'sends the read and one write statement for an update or a delete (no BEGIN, no COMMIT)',
    async () => {
      const statements = recordStatements(t.database.pool!)
      const client = await newClient(t)
      const token = await accessToken(t.app, client)
      const v2 = (method: 'PUT' | 'POST' | 'DELETE', url: string, payload?: object) =>
        t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) })
      const created = await v2('POST', '/v2/pet', { name: 'Tom', photoUrls: [] })
      expect(created.statusCode, created.body).toBe(200)
      const petId = created.json().id as number
      const id = await newPet()

      for (const [change, writes] of [
        [() => call({ method: 'PATCH', url: `/v1/pet/${id}`, ...form({ breed: 'beagle' }) }), 'update'],
        [
          () => v2('PUT', '/v2/pet', { id: petId, name: 'Tom', photoUrls: ['https://example.com/t.jpg'] }),
          'update',
        ],
        [() => v2('DELETE', `/v2/pet/${petId}`), 'delete'],
        [() => call({ method: 'DELETE', url: `/v1/pet/${id}` }), 'delete'],
      ] as const) {
        statements.length = 0
        const res = await change()
        expect(res.statusCode, res.body).toBe(200)
        expect(statements, statements.join('\n')).toHaveLength(2)
        expect(statements[0]).toMatch(/^select .* from "pets"/)
        expect(statements[1]).toMatch(
          writes === 'update'
            ? /^with "updated_pet" as \(update "pets"/
            : /^with "deleted_pet" as \(delete from "pets"/,
        )
      }
    },
  )
})
