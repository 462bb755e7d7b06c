import { Migrator } from 'kysely'
import { expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.ts'
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

  it('2026-11-23T06-oauth drops provider sessions and interactions stored with the session id in clear', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
      })
      const before = await migrator.migrateTo('2026-11-22T02-dashboard')
      expect(before.error).toBeUndefined()
      const row = (model: string, id: string, payload: object) => ({
        model,
        id,
        payload: JSON.stringify(payload),
        grant_id: null,
        uid: null,
        expires_at: null,
        consumed_at: null,
      })
      await database.db
        .insertInto('oauth_store')
        .values([
          row('Session', 'clear-session-id', { jti: 'clear-session-id', accountId: 'acct_1' }),
          row('Interaction', 'uid-1', { session: { cookie: 'clear-session-id' } }),
          row('Grant', 'grant-1', { accountId: 'acct_1' }),
        ])
        .execute()
      await migrateToLatest(database.db)
      const left = await database.db.selectFrom('oauth_store').select(['model', 'payload']).execute()
      expect(left.map((r) => r.model)).toEqual(['Grant'])
      expect(JSON.stringify(left)).not.toContain('clear-session-id')
    } finally {
      await database.destroy()
    }
  })
})
