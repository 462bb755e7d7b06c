// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Users the Petstore way: a username names one user of its account (a partial unique index, so
 * users without one stay many), and the integer id v2 shows is the account's own
 * (`petstore_id`, unique per account) instead of the global sequence.
 *
 * Existing data is kept. Every user keeps the v2 id it showed (its `seq`). Where an account holds
 * several users with the same username (nothing forbade it), the oldest keeps it and each other
 * one is renamed `<username>~<seq>` (with a further `~2`, `~3`… in the unlikely case that name is
 * taken too), so none loses its username and every one stays reachable.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter

  const duplicates = await db
    .selectFrom('users as u')
    .select(['u.seq', 'u.account_id', 'u.username'])
    .where('u.username', 'is not', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('users as older')
          .select('older.seq')
          .whereRef('older.account_id', '=', 'u.account_id')
          .whereRef('older.username', '=', 'u.username')
          .whereRef('older.seq', '<', 'u.seq'),
      ),
    )
    .orderBy('u.seq')
    .execute()
  for (const row of duplicates as { seq: number | string; account_id: string; username: string }[]) {
    const seq = Number(row.seq)
    for (let attempt = 1; ; attempt++) {
      const candidate = `${row.username}~${seq}${attempt === 1 ? '' : `~${attempt}`}`
      const taken = await db
        .selectFrom('users')
        .select('seq')
        .where('account_id', '=', row.account_id)
        .where('username', '=', candidate)
        .executeTakeFirst()
      if (taken !== undefined) continue
      await db.updateTable('users').set({ username: candidate }).where('seq', '=', seq).execute()
      break
    }
  }
  await db.schema
    .createIndex('users_account_username')
    .unique()
    .on('users')
    .columns(['account_id', 'username'])
    .where(sql.ref('username'), 'is not', null)
    .execute()

  const bigint = postgres ? 'bigint' : 'integer'
  await db.schema
    .alterTable('users')
    .addColumn('petstore_id', bigint, (c) => c.notNull().defaultTo(0))
    .execute()
  await db
    .updateTable('users')
    .set({ petstore_id: sql.ref('seq') })
    .execute()
  if (postgres) await sql`alter table users alter column petstore_id drop default`.execute(db)
  await db.schema
    .createIndex('users_account_petstore_id')
    .unique()
    .on('users')
    .columns(['account_id', 'petstore_id'])
    .execute()
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_account_petstore_id').execute()
  await db.schema.alterTable('users').dropColumn('petstore_id').execute()
  await db.schema.dropIndex('users_account_username').execute()
}
