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

  /** Rows with these ids, as a client choosing them would make. */
  async function take(accountId: string, ids: Iterable<number>): Promise<void> {
    for (const id of ids) expect(await insertPet(database.db, accountId, id)).toBe(id)
  }

  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

  it('creates however many ids in a row the account took, after it took one near the top', async () => {
    const ids = allocator(8)
    const account = await newAccount()
    // Near MAX_ID there is no room past the highest id, so blocks start where the counter is:
    // 1, 9, 17, … The account takes every one of those and a run of 200 from 1.
    await take(account, [MAX_ID, ...range(1, 200), ...range(0, 100).map((n) => 201 + 8 * n)])
    expect(await create(ids, account)).toBe(202)
    const more = [await create(ids, account), await create(ids, account), await create(allocator(8), account)]
    expect(new Set([202, ...more]).size).toBe(4)
  })

  it('starts over from 1 when the counter reaches the top, instead of refusing every create', async () => {
    const ids = allocator(8)
    const account = await newAccount()
    expect(await create(ids, account)).toBe(1)
    // A collision just below the top moves the counter to MAX_ID, past which no block fits.
    await take(account, [2, MAX_ID - 9])
    expect(await create(ids, account)).toBe(MAX_ID - 8)
    for (let i = 0; i < 7; i++) await create(ids, account)
    expect(await create(ids, account)).toBe(3)
    expect(await create(allocator(8), account)).toBeGreaterThan(0)
  })

  it('continues after a clean stop: a block’s unused ids go back to the counter', async () => {
    const account = await newAccount()
    const first = allocator()
    expect([await create(first, account), await create(first, account)]).toEqual([1, 2])
    await first.release()
    expect(await create(allocator(), account)).toBe(3)
  })

  it('gives back only what no other process reserved after, so no id is handed out twice', async () => {
    const account = await newAccount()
    const [one, two] = [allocator(8), allocator(8)]
    expect((await one.reserve(account, 'pet')).id).toBe(1)
    expect((await two.reserve(account, 'pet')).id).toBe(9)
    // One's block (1–8) is followed by two's: moving the counter back to 2 would hand out 9 again.
    await one.release()
    const three = allocator(8)
    const next = await Promise.all(Array.from({ length: 8 }, () => three.reserve(account, 'pet')))
    expect(next.map((r) => r.id)).toEqual(range(17, 24))
    // Two's block is no longer the last reserved either; three's is, and its rest goes back.
    await two.release()
    await three.release()
    expect((await allocator(8).reserve(account, 'pet')).id).toBe(25)
    const four = allocator(8)
    expect((await four.reserve(account, 'pet')).id).toBe(33)
    await four.release()
    expect((await allocator(8).reserve(account, 'pet')).id).toBe(34)
  })

  it('never hands out an id twice while processes reserve, stop and start at once', async () => {
    const account = await newAccount()
    const handedOut: number[] = []
    let running = [allocator(4), allocator(4), allocator(4)]
    for (let round = 0; round < 8; round++) {
      const reserved = await Promise.all(
        Array.from({ length: 30 }, (_, i) => running[i % running.length]!.reserve(account, 'pet')),
      )
      handedOut.push(...reserved.map((r) => r.id))
      // One process stops (while another reserves) and a new one takes its place.
      const [stopping, ...rest] = running
      const [, late] = await Promise.all([stopping!.release(), rest[0]!.reserve(account, 'pet')])
      handedOut.push(late.id)
      running = [...rest, allocator(4)]
    }
    expect(new Set(handedOut).size).toBe(handedOut.length)
  })
})
