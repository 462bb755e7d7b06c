// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Sandboxes: a sandbox is an account of its own (its own pets, users, orders, keys, apps,
 * webhooks and events follow from that), linked to the live account it belongs to by
 * `live_account_id`. The unique index keeps one sandbox per live account (NULLs, the live
 * accounts, are many). Deleting a live account deletes its sandbox.
 *
 * A dashboard session remembers which of the two it shows (`mode`: `live` or `sandbox`); it is
 * always signed in to the live account.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts add column live_account_id text references accounts(id) on delete cascade`.execute(
    db,
  )
  await sql`create unique index accounts_live_account_id on accounts (live_account_id)`.execute(db)
  await sql`alter table dashboard_sessions add column mode text not null default 'live'`.execute(db)
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table dashboard_sessions drop column mode`.execute(db)
  await sql`drop index accounts_live_account_id`.execute(db)
  await sql`delete from accounts where live_account_id is not null`.execute(db)
  // SQLite cannot drop a column a foreign key names (https://sqlite.org/lang_altertable.html):
  // there the empty column stays, which the code before this migration never reads.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table accounts drop column live_account_id`.execute(db)
  }
}
