import { sql } from 'kysely'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { AccountIds, MAX_ID } from '../../src/db/account-ids.ts'
import type { Db } from '../../src/db/schema.ts'
import { randomBase62 } from '../../src/lib/ids.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'

describeDb('per-account ids (AccountIds)', () => {
  let database: TestDatabase
  beforeEach(async () => {
    database = await createTestDatabase()
  })
  afterEach(async () => {
    await database?.destroy()
  })

  const allocator = (blockSize?: number) =>
    new AccountIds(database.db, { postgres: DIALECT === 'postgres', ...(blockSize && { blockSize }) })

  async function newAccount(): Promise<string> {
    const id = `acct_${randomBase62(12)}`
    await database.db
      .insertInto('accounts')
      .values({ id, email: `${id}@example.com`, password_hash: null, created_at: new Date().toISOString() })
      .execute()
    return id
  }

  /** A pet row with this id, unless the account has one: what a create's insert does. */
  async function insertPet(db: Db, accountId: string, id: number): Promise<number | undefined> {
    const at = new Date().toISOString()
    const { rows } = await sql<{ id: number }>`
      insert into pets (id, account_id, name, status, photo_urls, version, created_at, updated_at)
      values (${id}, ${accountId}, ${`pet ${id}`}, 'available', '[]', 1, ${at}, ${at})
      on conflict do nothing returning id`.execute(db)
    return rows[0] === undefined ? undefined : Number(rows[0].id)
  }

  async function create(ids: AccountIds, accountId: string): Promise<number> {
    const reserved = await ids.reserve(accountId, 'pet')
    return database.db
      .transaction()
      .execute((trx) => reserved.insert(trx, (id) => insertPet(trx, accountId, id)))
  }

  it('counts each account from 1, on its own', async () => {
    const ids = allocator()
    const [a, b] = [await newAccount(), await newAccount()]
    const taken: Record<string, number[]> = { [a]: [], [b]: [] }
    for (const account of [a, b, a, a, b, b]) taken[account]!.push((await ids.reserve(account, 'pet')).id)
    expect(taken[a]).toEqual([1, 2, 3])
    expect(taken[b]).toEqual([1, 2, 3])
  })

  it('gives two processes disjoint blocks, and never one id twice, even all at once', async () => {
    const [one, two] = [allocator(4), allocator(4)]
    const account = await newAccount()
    const first = [(await one.reserve(account, 'pet')).id, (await two.reserve(account, 'pet')).id]
    expect(first).toEqual([1, 5])
    const all = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).reserve(account, 'pet')),
    )
    const every = [...first, ...all.map((r) => r.id)]
    expect(new Set(every).size).toBe(every.length)
  })

  it('starts past the ids already in the table (rows from before the counter keep theirs)', async () => {
    const account = await newAccount()
    for (const id of [3, 17, 40]) await insertPet(database.db, account, id + 1_000_000)
    expect((await allocator().reserve(account, 'pet')).id).toBe(1_000_041)
  })

  it('skips an id a client chose ahead of the counter, moving past the account’s highest', async () => {
    const ids = allocator(8)
    const account = await newAccount()
    expect(await create(ids, account)).toBe(1)
    // A client chooses 2 and 5, where the counter has not reached yet.
    for (const id of [2, 5]) expect(await insertPet(database.db, account, id)).toBe(id)
    // 2 is taken: the next block starts past the counter (1–8 were reserved) and the highest id.
    expect(await create(ids, account)).toBe(9)
    expect(await create(ids, account)).toBe(10)
    // Another process (its first block, 17–24, reserved after the collision) goes on from there.
    expect(await create(allocator(8), account)).toBe(17)
    // A client takes 11 and 12; the first process's block (9–16) meets them and moves past all.
    for (const id of [11, 12]) expect(await insertPet(database.db, account, id)).toBe(id)
    expect(await create(ids, account)).toBe(25)
    const rows = await database.db.selectFrom('pets').select('id').where('account_id', '=', account).execute()
    expect(rows.map((r) => Number(r.id)).sort((x, y) => x - y)).toEqual([1, 2, 5, 9, 10, 11, 12, 17, 25])
  })

  it('starts from 1 when a client took an id near the top (past it nothing is left)', async () => {
    const account = await newAccount()
    expect(await insertPet(database.db, account, MAX_ID)).toBe(MAX_ID)
    expect(await create(allocator(), account)).toBe(1)
  })
})
