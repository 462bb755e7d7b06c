import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-service.ts'
import type { ReservedId } from '../../src/db/account-ids.ts'
import { runAtomicWrite } from '../../src/db/atomic-write.ts'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import type { Db } from '../../src/db/schema.ts'
import { ApiError } from '../../src/errors/api-error.ts'
import { runIdempotentCreate } from '../../src/idempotency/idempotency.ts'
import { addPetImage } from '../../src/pets/images-service.ts'
import type { Pet } from '../../src/pets/pet.ts'
import { toPetV1 } from '../../src/pets/pet-views.ts'
import { createPet, deletePet, getPet, petCreation, updatePet } from '../../src/pets/pets-service.ts'
import { createUser } from '../../src/users/users-service.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

/**
 * The pets' writes reach each database its own way (src/pets/pet-writes.ts): one statement on
 * PostgreSQL, built from the events', users' and idempotency keys' fragments, and the same steps
 * one by one on SQLite. Here the same changes go through both, and leave the same rows: the pet,
 * its events, its uploaded images and a stored Idempotency-Key answer, compared with the values
 * each database makes up (ids of accounts, users and events, times) put aside.
 */
describeDb('a pet write leaves the same rows on SQLite and PostgreSQL', () => {
  interface Side {
    name: 'sqlite' | 'postgres'
    database: DatabaseHandle
    accountId: string
    ownerId: string
    /** What this side made up, replaced by a name when rows are compared. */
    madeUp: Map<string, string>
  }
  let postgres: TestDatabase
  let sqliteDir: string
  const sides: Side[] = []

  beforeAll(async () => {
    postgres = await createTestDatabase()
    sqliteDir = mkdtempSync(join(tmpdir(), 'pet-writes-agreement-'))
    const sqlite = openDatabase(`sqlite:${join(sqliteDir, 'test.db')}`)
    await migrateToLatest(sqlite.db)
    for (const [name, database] of [
      ['sqlite', sqlite],
      ['postgres', postgres],
    ] as const) {
      const { account } = await findOrCreateAccount(database.db, 'agree@example.com')
      const userId = await database.ids.reserve(account.id, 'user')
      const owner = await createUser(database.db, account.id, { name: 'Ann' }, userId)
      const madeUp = new Map([
        [account.id, '<account>'],
        [owner.id, '<owner>'],
      ])
      sides.push({ name, database, accountId: account.id, ownerId: owner.id, madeUp })
    }
  })
  afterAll(async () => {
    const sqlite = sides.find((side) => side.name === 'sqlite')
    await sqlite?.database.close()
    rmSync(sqliteDir, { recursive: true, force: true })
    await postgres?.destroy()
  })

  /**
   * Runs `change` on both sides, each as a route would (runAtomicWrite), and answers each outcome;
   * `before` runs first, outside the write (a route reserves a new pet's id so).
   */
  async function onBoth<T, B = undefined>(
    change: (db: Db, side: Side, prepared: B) => Promise<T>,
    before?: (side: Side) => Promise<B>,
  ): Promise<(T | ApiError)[]> {
    const outcomes: (T | ApiError)[] = []
    for (const side of sides) {
      const prepared = (await before?.(side)) as B
      try {
        outcomes.push(await runAtomicWrite(side.database.db, (db) => change(db, side, prepared)))
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        outcomes.push(error)
      }
    }
    return outcomes
  }

  /** A create on both sides, its id reserved before the write as the routes do. */
  function createOnBoth(fieldsOf: (side: Side) => Parameters<typeof createPet>[2]) {
    return onBoth(
      (db, side, id: ReservedId) => createPet(db, side.accountId, fieldsOf(side), id),
      (side) => side.database.ids.reserve(side.accountId, 'pet'),
    )
  }

  const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g

  /** Every row the pet writes touch, as comparable text: made-up values named, times put aside. */
  async function rowsOf(side: Side): Promise<string> {
    const db = side.database.db
    const pets = await db.selectFrom('pets').selectAll().orderBy('id').execute()
    const events = await db
      .selectFrom('events')
      .select(['account_id', 'type', 'object_id', 'data', 'previous_attributes'])
      .orderBy('seq')
      .execute()
    const images = await db
      .selectFrom('pet_images')
      .select(['account_id', 'pet_id', 'content_type', 'size_bytes'])
      .orderBy('size_bytes')
      .execute()
    const keys = await db
      .selectFrom('idempotency_keys')
      .select([
        'account_id',
        'key',
        'request_hash',
        'state',
        'response_status',
        'response_headers',
        'response_body',
      ])
      .orderBy('key')
      .execute()
    // The two dialects list a table's columns in different orders.
    const sorted = (row: object) =>
      Object.fromEntries(Object.entries(row).sort(([a], [b]) => a.localeCompare(b)))
    let text = JSON.stringify(
      {
        pets: pets.map(({ seq: _seq, created_at: _c, updated_at: _u, ...pet }) => sorted(pet)),
        events: events.map(sorted),
        images: images.map((image) => sorted({ ...image, size_bytes: Number(image.size_bytes) })),
        keys: keys.map((key) => sorted({ ...key, response_status: Number(key.response_status) })),
      },
      null,
      1,
    ).replace(TIME, '<time>')
    for (const [value, name] of side.madeUp) text = text.replaceAll(value, name)
    return text
  }

  async function expectSameRows(): Promise<string> {
    const [sqliteRows, postgresRows] = await Promise.all(sides.map(rowsOf))
    expect(postgresRows).toEqual(sqliteRows)
    return sqliteRows!
  }

  /** The same error on both sides, by code. */
  function codesOf(outcomes: unknown[]): (string | undefined)[] {
    return outcomes.map((outcome) => (outcome instanceof ApiError ? outcome.code : undefined))
  }

  it('a create writes the pet with its default status and its pet.created event', async () => {
    const created = await createOnBoth((side) => ({
      name: 'Rex "the dog" é',
      species: 'dog',
      ownerId: side.ownerId,
      tags: [{ name: 't' }],
    }))
    expect(created.map((pet) => (pet as Pet).id)).toEqual([1, 1])
    const rows = await expectSameRows()
    expect(rows).toContain('"type": "pet.created"')
    expect(rows).toContain('"status": "available"')
  })

  it('a create naming an owner who is not a user of the account is refused and writes nothing', async () => {
    const before = await expectSameRows()
    const outcomes = await createOnBoth(() => ({ name: 'Stray', ownerId: 'usr_nobody' }))
    expect(codesOf(outcomes)).toEqual(['owner_not_found', 'owner_not_found'])
    expect(await expectSameRows()).toEqual(before)
  })

  it('a keyed create stores its answer with the key, and a retry writes nothing more', async () => {
    const keyed = async (side: Side) => {
      const id = await side.database.ids.reserve(side.accountId, 'pet')
      const request = { accountId: side.accountId, key: 'agree-1', fingerprint: 'f1' }
      const creation = {
        ...petCreation(side.accountId, { name: 'Kiki', species: 'cat' }, id),
        respond: (pet: Pet) => ({
          status: 201,
          headers: { location: `/v1/pet/${pet.id}` },
          body: toPetV1(pet),
        }),
      }
      // runIdempotentCreate picks its own way through each database (a transaction, or none).
      return runIdempotentCreate(side.database.db, request, creation)
    }
    const sent = []
    for (const side of sides) sent.push(await keyed(side))
    expect(sent.map((answer) => [answer.status, answer.replayed])).toEqual([
      [201, false],
      [201, false],
    ])
    const once = await expectSameRows()
    expect(once).toContain('"key": "agree-1"')
    const again = []
    for (const side of sides) again.push(await keyed(side))
    expect(again.map((answer) => answer.replayed)).toEqual([true, true])
    expect(await expectSameRows()).toEqual(once)
  })

  it('an update writes the changed fields at the next version, and pet.updated with what they were', async () => {
    const updated = await onBoth((db, side) =>
      updatePet(db, side.accountId, 1, { name: 'Rex II', status: 'pending', ownerId: null }),
    )
    expect(updated.map((pet) => (pet as Pet).version)).toEqual([2, 2])
    const rows = await expectSameRows()
    expect(rows).toContain('"type": "pet.updated"')
  })

  it('an update naming an owner who is not a user of the account is refused and writes nothing', async () => {
    const before = await expectSameRows()
    const outcomes = await onBoth((db, side) => updatePet(db, side.accountId, 1, { ownerId: 'usr_nobody' }))
    expect(codesOf(outcomes)).toEqual(['owner_not_found', 'owner_not_found'])
    expect(await expectSameRows()).toEqual(before)
  })

  it('an update of the photo URLs deletes the uploaded images they no longer name, and only those', async () => {
    const png = (bytes: number) =>
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(bytes)])
    for (const bytes of [100, 200]) {
      await onBoth((db, side) =>
        addPetImage(db, {
          accountId: side.accountId,
          petId: 1,
          data: png(bytes),
          filename: `${bytes}.png`,
          publicUrl: 'https://pets.example',
          quotaBytes: 1_000_000,
        }),
      )
    }
    for (const side of sides) {
      // Image names are made up by each side: named by their order.
      const images = await side.database.db
        .selectFrom('pet_images')
        .select('name')
        .orderBy('size_bytes')
        .execute()
      for (const [i, image] of images.entries()) side.madeUp.set(image.name, `<image ${i}>`)
    }
    const withImages = await expectSameRows()
    expect(withImages.match(/"size_bytes"/g)).toHaveLength(2)

    // Keep the first upload's URL and another site's: the second upload goes.
    await onBoth(async (db, side) => {
      const pet = await getPet(db, side.accountId, 1)
      const kept = pet.photoUrls.filter((url) => !url.includes([...side.madeUp.keys()].at(-1)!))
      return updatePet(db, side.accountId, 1, { photoUrls: [...kept, 'https://elsewhere.example/a.jpg'] })
    })
    const pruned = await expectSameRows()
    expect(pruned.match(/"size_bytes"/g)).toHaveLength(1)
    expect(pruned).toContain('"size_bytes": 108')
  })

  it('a delete removes the pet and its images, and writes pet.deleted with the pet as it was', async () => {
    const deleted = await onBoth((db, side) => deletePet(db, side.accountId, 1))
    expect(deleted.map((pet) => (pet as Pet).id)).toEqual([1, 1])
    const rows = await expectSameRows()
    expect(rows).toContain('"type": "pet.deleted"')
    expect(rows).not.toContain('"size_bytes"')
  })
})
