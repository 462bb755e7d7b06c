import { type Kysely, Migrator } from 'kysely'
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

  it('2026-11-24T09-pets-per-account keeps every pet, its id and its images, and lets two accounts share an id', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
      })
      expect((await migrator.migrateTo('2026-11-24T08-account-sequences')).error).toBeUndefined()
      const at = new Date().toISOString()
      // biome-ignore lint/suspicious/noExplicitAny: the schema of that time, not today's
      const old = database.db as unknown as Kysely<any>
      await old
        .insertInto('accounts')
        .values(['acct_a', 'acct_b'].map((id) => ({ id, email: `${id}@example.com`, created_at: at })))
        .execute()
      const pet = (id: number, account: string, name: string) => ({
        id,
        account_id: account,
        name,
        status: 'available',
        photo_urls: JSON.stringify([`https://x/v2/images/${id}-img.png`]),
        version: 3,
        created_at: at,
        updated_at: at,
        status_omitted: 1,
      })
      // A global sequence: ids interleave between the accounts.
      await old
        .insertInto('pets')
        .values([pet(1, 'acct_a', 'Rex'), pet(2, 'acct_b', 'Tom'), pet(5, 'acct_a', 'Fido')])
        .execute()
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47])
      await old
        .insertInto('pet_images')
        .values({
          name: '5-img.png',
          account_id: 'acct_a',
          pet_id: 5,
          content_type: 'image/png',
          size_bytes: 4,
          data: png,
          created_at: at,
        })
        .execute()

      await migrateToLatest(database.db)

      const pets = await database.db
        .selectFrom('pets')
        .select(['seq', 'id', 'account_id', 'name', 'version', 'status_omitted'])
        .orderBy('seq')
        .execute()
      expect(pets.map((p) => ({ ...p, seq: Number(p.seq), id: Number(p.id) }))).toEqual([
        { seq: 1, id: 1, account_id: 'acct_a', name: 'Rex', version: 3, status_omitted: 1 },
        { seq: 2, id: 2, account_id: 'acct_b', name: 'Tom', version: 3, status_omitted: 1 },
        { seq: 5, id: 5, account_id: 'acct_a', name: 'Fido', version: 3, status_omitted: 1 },
      ])
      const image = await database.db.selectFrom('pet_images').selectAll().executeTakeFirstOrThrow()
      expect({ ...image, pet_id: Number(image.pet_id), data: Buffer.from(image.data) }).toEqual({
        name: '5-img.png',
        account_id: 'acct_a',
        pet_id: 5,
        content_type: 'image/png',
        size_bytes: 4,
        data: png,
        created_at: at,
      })

      // Account B may now have a pet 5 too; a new pet gets a seq past the old ids.
      await database.db
        .insertInto('pets')
        .values({ ...pet(5, 'acct_b', 'Other'), photo_urls: '[]' })
        .execute()
      const [newest] = await database.db
        .selectFrom('pets')
        .select('seq')
        .where('account_id', '=', 'acct_b')
        .where('id', '=', 5)
        .execute()
      expect(Number(newest!.seq)).toBeGreaterThan(5)
      // The images follow their pet by (account, id): B's pet 5 going leaves A's image.
      await database.db.deleteFrom('pets').where('account_id', '=', 'acct_b').where('id', '=', 5).execute()
      expect(await database.db.selectFrom('pet_images').select('name').execute()).toHaveLength(1)
      await database.db.deleteFrom('pets').where('account_id', '=', 'acct_a').where('id', '=', 5).execute()
      expect(await database.db.selectFrom('pet_images').select('name').execute()).toHaveLength(0)
      // Still one pet 1 per account.
      await expect(
        database.db
          .insertInto('pets')
          .values({ ...pet(1, 'acct_a', 'Twice'), photo_urls: '[]' })
          .execute(),
      ).rejects.toThrow()
    } finally {
      await database.destroy()
    }
  })

  it('2026-11-24T10-usernames keeps every user and its v2 id, makes usernames unique per account, and renames duplicates', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
      })
      expect((await migrator.migrateTo('2026-11-24T09-pets-per-account')).error).toBeUndefined()
      const at = '2026-11-20T00:00:00.000Z'
      await database.db
        .insertInto('accounts')
        .values([
          { id: 'acct_a', email: 'a@example.com', password_hash: null, created_at: at },
          { id: 'acct_b', email: 'b@example.com', password_hash: null, created_at: at },
        ])
        .execute()
      // As the old schema allowed: the same username twice in one account (and a taken "rename").
      const old = [
        ['usr_1', 'acct_a', 'alice'],
        ['usr_2', 'acct_b', 'alice'],
        ['usr_3', 'acct_a', 'alice'],
        ['usr_4', 'acct_a', null],
        ['usr_5', 'acct_a', null],
        ['usr_6', 'acct_a', 'bob'],
        ['usr_7', 'acct_a', 'alice~8'],
        ['usr_8', 'acct_a', 'alice'],
      ] as const
      for (const [id, account, username] of old) {
        await database.db
          .insertInto('users')
          .values({
            id,
            account_id: account,
            name: id,
            username,
            version: 1,
            created_at: at,
            updated_at: at,
          } as never)
          .execute()
      }
      const before = await database.db.selectFrom('users').select(['id', 'seq']).orderBy('seq').execute()

      await migrateToLatest(database.db)

      const after = await database.db
        .selectFrom('users')
        .select(['id', 'seq', 'account_id', 'username', 'petstore_id', 'name'])
        .orderBy('seq')
        .execute()
      expect(after.map((u) => u.id)).toEqual(old.map(([id]) => id))
      const seqOf = (id: string) => before.find((u) => u.id === id)!.seq
      // Every user keeps the integer id v2 showed it (its seq).
      for (const u of after) expect(u.petstore_id).toBe(u.seq)
      const usernames = Object.fromEntries(after.map((u) => [u.id, u.username]))
      expect(usernames).toEqual({
        usr_1: 'alice',
        usr_2: 'alice',
        usr_3: `alice~${seqOf('usr_3')}`,
        usr_4: null,
        usr_5: null,
        usr_6: 'bob',
        usr_7: 'alice~8',
        // "alice~<seq>" was free for usr_8 unless usr_7 had it; then the next suffix.
        usr_8: seqOf('usr_8') === 8 ? 'alice~8~2' : `alice~${seqOf('usr_8')}`,
      })
      // The index now refuses a second "bob" in account A, and lets account B have one.
      const insert = (id: string, account: string, username: string, petstoreId: number) =>
        database.db
          .insertInto('users')
          .values({
            id,
            account_id: account,
            petstore_id: petstoreId,
            name: id,
            username,
            version: 1,
            created_at: at,
            updated_at: at,
          })
          .execute()
      await expect(insert('usr_9', 'acct_a', 'bob', 1000)).rejects.toThrow()
      await insert('usr_10', 'acct_b', 'bob', 1001)
      // And a v2 id already used in the account.
      await expect(insert('usr_11', 'acct_a', 'carol', after[0]!.petstore_id)).rejects.toThrow()
    } finally {
      await database.destroy()
    }
  })

  it('2026-11-26T11-sandbox-accounts keeps accounts and sessions live, and allows one sandbox per live account', async () => {
    const database = await createTestDatabase({ migrate: false })
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
      })
      expect((await migrator.migrateTo('2026-11-25T12-webhook-claims-per-endpoint')).error).toBeUndefined()
      const at = new Date().toISOString()
      // biome-ignore lint/suspicious/noExplicitAny: the schema of that time, not today's
      const old = database.db as unknown as Kysely<any>
      await old
        .insertInto('accounts')
        .values({ id: 'acct_old', email: 'old@example.com', created_at: at })
        .execute()
      await old
        .insertInto('dashboard_sessions')
        .values({ id_hash: 'h', account_id: 'acct_old', created_at: at, expires_at: at, user_agent: null })
        .execute()

      await migrateToLatest(database.db)

      const account = await database.db.selectFrom('accounts').selectAll().executeTakeFirstOrThrow()
      expect(account.live_account_id).toBeNull()
      const session = await database.db
        .selectFrom('dashboard_sessions')
        .select('mode')
        .executeTakeFirstOrThrow()
      expect(session.mode).toBe('live')
      const sandbox = (id: string) => ({
        id,
        email: `sandbox:${id}`,
        password_hash: null,
        created_at: at,
        live_account_id: 'acct_old',
      })
      await database.db.insertInto('accounts').values(sandbox('acct_sb1')).execute()
      await expect(database.db.insertInto('accounts').values(sandbox('acct_sb2')).execute()).rejects.toThrow()
    } finally {
      await database.destroy()
    }
  })
})
