// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * The hot tables' schema, designed for the path every create takes (issue 29). On SQLite each
 * b-tree a create touches is one more page written to the WAL at commit, so an index or counter
 * no query needs is paid on every write. What changes, and why (bench/README.md, "The hot path's
 * schema", has the query behind every index that stays, and test/db/hot-path-plans.*.test.ts
 * proves each is used):
 *
 * - `pets.seq` loses AUTOINCREMENT on SQLite (PostgreSQL's identity never reuses a number, and
 *   stays). A pet's seq only orders the account's lists; no cursor holds one (list cursors are pet
 *   ids, turned into a seq at each request by db/keyset-page.ts), and a new row still takes
 *   max(seq) + 1 (https://sqlite.org/autoinc.html), so the newest pet is still last. A number
 *   reused after the newest pet was deleted names no row anyone kept. That spares the
 *   `sqlite_sequence` update of every pet create.
 * - `events.seq` keeps AUTOINCREMENT: the live streams and the webhooks' fan-out read
 *   `seq > cursor` and keep the cursor, and the purge deletes the oldest events, up to all of
 *   them; a reused number (or rowids restarting at 1 in an emptied table) would hide new events
 *   behind a cursor.
 * - `pets_owner` becomes partial (`owner_id is not null`): it serves the owner filter of the
 *   lists and the `users` delete's foreign-key check, both of which look for one owner; a pet
 *   without an owner (most pets) no longer writes to it. `pets_account_species` likewise
 *   (`species is not null`): the species filter names one species, and the dashboard's list of
 *   species asks for those not null (pets-repository.ts, listSpecies).
 * - `pet_images_account (account_id, size_bytes)` and `pet_images_pet (pet_id)` merge into one
 *   `(account_id, pet_id, size_bytes)`: it covers the account's storage sum, and the delete of a
 *   pet (the images' foreign key, `(account_id, pet_id)`, and the pruning of its images) finds
 *   the pet's images by both columns, which the old `(pet_id)` index matched only half of.
 *
 * SQLite cannot drop AUTOINCREMENT in place, so pets is rebuilt as in 2026-11-24T09: the old
 * tables are renamed first (which repoints the images' foreign key at the old pets), so that no
 * drop cascades into rows still needed; every pet keeps its seq.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index pets_owner`.execute(db)
    await sql`drop index pets_account_species`.execute(db)
    await partialIndexes(db)
    await sql`drop index pet_images_account`.execute(db)
    await sql`drop index pet_images_pet`.execute(db)
    await sql`create index pet_images_account_pet on pet_images (account_id, pet_id, size_bytes)`.execute(db)
    return
  }
  await rebuildSqlite(db, false)
  await partialIndexes(db)
  await sql`create index pet_images_account_pet on pet_images (account_id, pet_id, size_bytes)`.execute(db)
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index pets_owner`.execute(db)
    await sql`drop index pets_account_species`.execute(db)
    await sql`drop index pet_images_account_pet`.execute(db)
  } else {
    await rebuildSqlite(db, true)
  }
  await sql`create index pets_owner on pets (owner_id, seq)`.execute(db)
  await sql`create index pets_account_species on pets (account_id, species, seq)`.execute(db)
  await sql`create index pet_images_account on pet_images (account_id, size_bytes)`.execute(db)
  await sql`create index pet_images_pet on pet_images (pet_id)`.execute(db)
}

/** Pets (and, for its foreign key, pet_images) rebuilt with every row, with or without AUTOINCREMENT. */
// biome-ignore lint/suspicious/noExplicitAny: see up()
async function rebuildSqlite(db: Kysely<any>, autoincrement: boolean): Promise<void> {
  await sql`alter table pets rename to pets_old`.execute(db)
  await sql`
    create table pets (
      seq integer primary key ${sql.raw(autoincrement ? 'autoincrement' : '')},
      id integer not null,
      account_id text not null references accounts(id) on delete cascade,
      name text not null,
      owner_id text references users(id),
      species text,
      breed text,
      status text not null,
      photo_urls text not null,
      category text,
      tags text,
      version integer not null,
      created_at text not null,
      updated_at text not null,
      status_omitted integer not null default 0,
      constraint pets_account_pet unique (account_id, id)
    )`.execute(db)
  // In seq order: the rows append to the table's b-tree instead of splitting pages at random.
  await sql`
    insert into pets (seq, id, account_id, name, owner_id, species, breed, status, photo_urls,
      category, tags, version, created_at, updated_at, status_omitted)
    select seq, id, account_id, name, owner_id, species, breed, status, photo_urls,
      category, tags, version, created_at, updated_at, status_omitted
    from pets_old order by seq`.execute(db)

  await sql`alter table pet_images rename to pet_images_old`.execute(db)
  await sql`
    create table pet_images (
      name text primary key,
      account_id text not null references accounts(id) on delete cascade,
      pet_id integer not null,
      content_type text not null,
      size_bytes integer not null,
      data blob not null,
      created_at text not null,
      foreign key (account_id, pet_id) references pets (account_id, id) on delete cascade
    )`.execute(db)
  await sql`
    insert into pet_images (name, account_id, pet_id, content_type, size_bytes, data, created_at)
    select name, account_id, pet_id, content_type, size_bytes, data, created_at from pet_images_old`.execute(
    db,
  )
  // Children first: dropping the old pets while old images still pointed at them would cascade.
  await sql`drop table pet_images_old`.execute(db)
  await sql`drop table pets_old`.execute(db)

  // The indexes went with the old tables; those that do not change, again.
  await sql`create index pets_account_id on pets (account_id, seq)`.execute(db)
  await sql`create index pets_account_status on pets (account_id, status, seq)`.execute(db)
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
async function partialIndexes(db: Kysely<any>): Promise<void> {
  await sql`create index pets_owner on pets (owner_id, seq) where owner_id is not null`.execute(db)
  await sql`create index pets_account_species on pets (account_id, species, seq) where species is not null`.execute(
    db,
  )
}
