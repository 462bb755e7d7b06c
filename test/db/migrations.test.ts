import { expect, it } from 'vitest'
import { migrations } from '../../src/db/migrations/index.ts'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, describeDb } from '../helpers/database.ts'

describeDb('migrations', () => {
  it('let several processes migrate one empty database at the same moment', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const runs = await Promise.all(
        [1, 2, 3].map(() => runPetService(['migrate'], { DATABASE_URL: database.url })),
      )
      for (const run of runs) expect(run.code, run.stderr).toBe(0)
      const applied = await database.db
        .selectFrom('kysely_migration' as never)
        .selectAll()
        .execute()
      expect(applied).toHaveLength(Object.keys(migrations).length)
      const tables = (await database.db.introspection.getTables()).map((t) => t.name)
      expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'pets', 'users', 'events']))
    } finally {
      await database.destroy()
    }
  })
})
