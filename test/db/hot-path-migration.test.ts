import { type Kysely, Migrator, sql } from 'kysely'
import { expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'

const NAME = '2026-11-27T12-hot-path-schema'
const names = Object.keys(migrations)
const PREVIOUS = names[names.indexOf(NAME) - 1]!

/** The indexes of a table, by name, with their definition's text where the dialect gives one. */
async function indexesOf(t: TestDatabase, table: string): Promise<string[]> {
  if (DIALECT === 'sqlite') {
    const { rows } = await sql<{ name: string; sql: string | null }>`
      select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} order by name`.execute(
      t.db,
    )
    return rows.map((r) => `${r.name}: ${(r.sql ?? '').replace(/\s+/g, ' ')}`)
  }
  const { rows } = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes where tablename = ${table} and schemaname = current_schema()
    order by indexname`.execute(t.db)
  return rows.map((r) => `${r.indexname}: ${r.indexdef}`)
}

describeDb('migration 2026-11-27T12-hot-path-schema', () => {
  it('keeps every pet (its seq too), image and foreign key, and undoes cleanly', async () => {
    const t = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: t.db,
        provider: { getMigrations: async () => migrations },
        ...(t.schema === undefined ? {} : { migrationTableSchema: t.schema }),
      })
      expect((await migrator.migrateTo(PREVIOUS)).error).toBeUndefined()
      const at = new Date().toISOString()
      // biome-ignore lint/suspicious/noExplicitAny: the schema of that time, not today's
      const old = t.db as unknown as Kysely<any>
      await old
        .insertInto('accounts')
        .values({ id: 'acct_a', email: 'a@example.com', created_at: at })
        .execute()
      await old
        .insertInto('users')
        .values({
          id: 'usr_1',
          account_id: 'acct_a',
          name: 'Ann',
          version: 1,
          created_at: at,
          updated_at: at,
          username: 'ann',
          petstore_id: 1,
        })
        .execute()
      const pet = (id: number, owner: string | null) => ({
        id,
        account_id: 'acct_a',
        name: `Pet ${id}`,
        owner_id: owner,
        species: id % 2 === 0 ? 'cat' : null,
        status: 'available',
        photo_urls: '[]',
        tags: id === 3 ? '[{"name":"x"}]' : null,
        version: id,
        created_at: at,
        updated_at: at,
        status_omitted: id % 2,
      })
      await old
        .insertInto('pets')
        .values([pet(1, 'usr_1'), pet(2, null), pet(3, null), pet(4, 'usr_1')])
        .execute()
      // The newest pet gone: its seq was the highest, which SQLite's AUTOINCREMENT remembered.
      await old.deleteFrom('pets').where('id', '=', 4).execute()
      await old
        .insertInto('pet_images')
        .values({
          name: '1-img.png',
          account_id: 'acct_a',
          pet_id: 1,
          content_type: 'image/png',
          size_bytes: 4,
          data: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
          created_at: at,
        })
        .execute()
      const petsBefore = await old.selectFrom('pets').selectAll().orderBy('seq').execute()
      const imagesBefore = await old.selectFrom('pet_images').selectAll().execute()
      const indexesBefore = [...(await indexesOf(t, 'pets')), ...(await indexesOf(t, 'pet_images'))]

      expect(await migrateToLatest(t.db)).toContain(NAME)

      expect(await old.selectFrom('pets').selectAll().orderBy('seq').execute()).toEqual(petsBefore)
      expect(await old.selectFrom('pet_images').selectAll().execute()).toEqual(imagesBefore)
      const pets = await indexesOf(t, 'pets')
      expect(pets.find((i) => i.startsWith('pets_owner:'))).toMatch(/where \(?owner_id is not null\)?/i)
      expect(pets.find((i) => i.startsWith('pets_account_species:'))).toMatch(
        /where \(?species is not null\)?/i,
      )
      const images = await indexesOf(t, 'pet_images')
      expect(images.map((i) => i.split(':')[0])).toContain('pet_images_account_pet')
      expect(images.map((i) => i.split(':')[0])).not.toContain('pet_images_pet')
      expect(images.map((i) => i.split(':')[0])).not.toContain('pet_images_account')
      if (DIALECT === 'sqlite') {
        const { rows } = await sql<{ n: number }>`
          select count(*) as n from sqlite_sequence where name = 'pets'`.execute(t.db)
        expect(rows[0]!.n).toBe(0)
      }

      // A new pet is still the newest: its seq is past every pet there is.
      await old.insertInto('pets').values(pet(5, null)).execute()
      const seqs = (await old.selectFrom('pets').select(['id', 'seq']).orderBy('seq').execute()).map((r) =>
        Number(r.id),
      )
      expect(seqs).toEqual([1, 2, 3, 5])
      // The foreign keys hold: an owner with pets cannot go, a pet's images go with it.
      await expect(old.deleteFrom('users').where('id', '=', 'usr_1').execute()).rejects.toThrow()
      await old.deleteFrom('pets').where('account_id', '=', 'acct_a').where('id', '=', 1).execute()
      expect(await old.selectFrom('pet_images').selectAll().execute()).toEqual([])

      // Down: the rows stay, and the indexes are those of before.
      expect((await migrator.migrateTo(PREVIOUS)).error).toBeUndefined()
      expect(
        (await old.selectFrom('pets').select('id').orderBy('seq').execute()).map((r) => Number(r.id)),
      ).toEqual([2, 3, 5])
      const indexesAfterDown = [...(await indexesOf(t, 'pets')), ...(await indexesOf(t, 'pet_images'))]
      expect(indexesAfterDown.map((i) => i.split(':')[0]).sort()).toEqual(
        indexesBefore.map((i) => i.split(':')[0]).sort(),
      )
    } finally {
      await t.destroy()
    }
  })
})
