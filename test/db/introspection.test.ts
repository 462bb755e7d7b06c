import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'

describeDb('schema introspection', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.destroy())

  it("lists the service's own tables, the migrator's only on request", async () => {
    const names = (await t.db.introspection.getTables()).map((table) => table.name)
    expect(names).toEqual(expect.arrayContaining(['pets', 'users', 'events']))
    expect(names).not.toContain('kysely_migration')
    const internal = await t.db.introspection.getTables({ withInternalKyselyTables: true })
    expect(internal.map((table) => table.name)).toContain('kysely_migration')
  })

  if (DIALECT === 'postgres') {
    it('sees only its own schema, so schemas other sessions drop meanwhile cannot fail a migration', async () => {
      const other = new pg.Client({ connectionString: POSTGRES_URL })
      await other.connect()
      let churning = true
      // Another tenant (another test file, here) creating and dropping schemas all the while.
      const churn = (async () => {
        for (let i = 0; churning; i++) {
          const name = `churn_${process.pid}_${i}`
          await other.query(`create schema ${name}`)
          await other.query(`create table ${name}.t (id int)`)
          await other.query(`drop schema ${name} cascade`)
        }
      })()
      try {
        for (let i = 0; i < 150; i++) {
          const tables = await t.db.introspection.getTables({ withInternalKyselyTables: true })
          expect(new Set(tables.map((table) => table.schema))).toEqual(new Set([t.schema]))
        }
        expect(await migrateToLatest(t.db)).toEqual([])
      } finally {
        churning = false
        await churn
        await other.end()
      }
    })
  }
})
