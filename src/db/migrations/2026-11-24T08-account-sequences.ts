// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Per-account id counters (src/db/account-ids.ts): the next id a process may reserve for each
 * account and kind of record. A counter is created by its first reservation, past the highest id
 * already in its table, so nothing needs filling in here.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await sql`
    create table account_sequences (
      account_id text not null references accounts(id) on delete cascade,
      kind text not null,
      next_id ${postgres ? sql`bigint` : sql`integer`} not null,
      primary key (account_id, kind)
    )`.execute(db)
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('account_sequences').execute()
}
