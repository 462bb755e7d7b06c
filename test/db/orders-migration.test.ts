import { Migrator } from 'kysely'
import { expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { createTestDatabase, describeDb } from '../helpers/database.ts'

describeDb('migration 2026-11-24T11-orders', () => {
  it('adds the orders table and keeps every existing record', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
      })
      const before = await migrator.migrateTo('2026-11-24T09-pets-per-account')
      expect(before.error).toBeUndefined()
      const at = '2026-11-24T00:00:00.000Z'
      await database.db
        .insertInto('accounts')
        .values({ id: 'acct_old', email: 'old@example.com', password_hash: null, created_at: at })
        .execute()
      await database.db
        .insertInto('pets')
        .values({
          id: 5,
          account_id: 'acct_old',
          name: 'Old Rex',
          owner_id: null,
          species: 'dog',
          breed: null,
          status: 'available',
          photo_urls: '[]',
          category: null,
          tags: null,
          version: 3,
          created_at: at,
          updated_at: at,
        })
        .execute()
      const kept = ['id', 'account_id', 'name', 'species', 'version'] as const
      const pets = await database.db.selectFrom('pets').select(kept).execute()

      await migrateToLatest(database.db)

      expect(await database.db.selectFrom('pets').select(kept).execute()).toEqual(pets)
      expect(await database.db.selectFrom('accounts').select('email').execute()).toEqual([
        { email: 'old@example.com' },
      ])
      const order = {
        account_id: 'acct_old',
        id: 7,
        pet_id: pets[0]!.id,
        quantity: 1,
        ship_date: null,
        status: 'placed',
        complete: 0,
        version: 1,
        created_at: at,
        updated_at: at,
      }
      await database.db.insertInto('orders').values(order).execute()
      // Ids are per account: the same id again in the account inserts nothing.
      const again = await database.db
        .insertInto('orders')
        .values(order)
        .onConflict((oc) => oc.columns(['account_id', 'id']).doNothing())
        .executeTakeFirst()
      expect(Number(again.numInsertedOrUpdatedRows)).toBe(0)
      expect(await database.db.selectFrom('orders').select(['id', 'pet_id']).execute()).toEqual([
        { id: 7, pet_id: pets[0]!.id },
      ])
    } finally {
      await database.destroy()
    }
  })
})
