import { afterAll, beforeAll, expect, it } from 'vitest'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { prepareQuery, variants } from '../../src/db/prepared-query.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

describeDb('Prepared queries', () => {
  let database: TestDatabase
  let accountId: string
  beforeAll(async () => {
    database = await createTestDatabase()
    accountId = (await findOrCreateAccount(database.db, 'prepared@example.com')).account.id
  })
  afterAll(() => database.destroy())

  it('build the query once and run it with each call’s values, inside transactions too', async () => {
    let builds = 0
    const insert = prepareQuery<
      { account: string; name: string; species: string | null; number: number },
      { id: number }
    >((db, p) => {
      builds++
      return db
        .insertInto('users')
        .values({
          id: p('name'),
          account_id: p('account'),
          petstore_id: p('number'),
          name: p('name'),
          email: p('species'),
          version: 1,
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-01T00:00:00.000Z',
        })
        .returning('seq as id')
    })
    await insert.execute(database.db, { account: accountId, name: 'usr_a', species: null, number: 1 })
    await database.db
      .transaction()
      .execute((trx) =>
        insert.execute(trx, { account: accountId, name: 'usr_b', species: 'b@example.com', number: 2 }),
      )
    expect(builds).toBe(1)
    const rows = await database.db
      .selectFrom('users')
      .select(['id', 'name', 'email', 'version'])
      .where('account_id', '=', accountId)
      .orderBy('seq')
      .execute()
    expect(rows).toEqual([
      { id: 'usr_a', name: 'usr_a', email: null, version: 1 },
      { id: 'usr_b', name: 'usr_b', email: 'b@example.com', version: 1 },
    ])
  })

  it('keep one query per shape when the shape varies', async () => {
    const byNames = variants<number, Record<`n${number}`, string>, { name: string }>(
      (count) => String(count),
      (count) => (db, p) =>
        db
          .selectFrom('users')
          .select('name')
          .where(
            'name',
            'in',
            Array.from({ length: count }, (_, i) => p(`n${i}`)),
          )
          .orderBy('name'),
    )
    expect(byNames(1)).toBe(byNames(1))
    expect(await byNames(2).execute(database.db, { n0: 'usr_b', n1: 'usr_a' })).toEqual([
      { name: 'usr_a' },
      { name: 'usr_b' },
    ])
    expect(await byNames(1).execute(database.db, { n0: 'usr_b' })).toEqual([{ name: 'usr_b' }])
  })
})
