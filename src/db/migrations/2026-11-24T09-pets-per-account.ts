// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Pet ids per account: two accounts may each have a pet 7. A pet is named by (account_id, id);
 * `seq`, global and never shown, keeps the order of creation for v1's newest-first lists. Every
 * pet keeps its id (and gets it as its `seq` too); its images follow it by (account_id, pet_id).
 *
 * PostgreSQL renames the identity column, primary key and indexes included, to `seq`. SQLite
 * cannot change a primary key in place, so both tables are rebuilt: the old ones are renamed
 * first (which repoints the images' foreign key at the old pets), so that no drop cascades
 * into rows still needed.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table pets rename column id to seq`.execute(db)
    // Rows written with explicit ids (a restore, an import) leave the identity behind them.
    await sql`select setval(pg_get_serial_sequence('pets', 'seq'), coalesce(max(seq), 0) + 1, false) from pets`.execute(
      db,
    )
    await sql`alter table pets add column id bigint`.execute(db)
    await sql`update pets set id = seq`.execute(db)
    await sql`alter table pets alter column id set not null`.execute(db)
    await sql`alter table pets add constraint pets_account_pet unique (account_id, id)`.execute(db)
    await sql`alter table pet_images drop constraint pet_images_pet_id_fkey`.execute(db)
    await sql`alter table pet_images add constraint pet_images_pet_fkey foreign key (account_id, pet_id)
      references pets (account_id, id) on delete cascade`.execute(db)
    return
  }

  await sql`alter table pets rename to pets_old`.execute(db)
  await sql`
    create table pets (
      seq integer primary key autoincrement,
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
  await sql`
    insert into pets (seq, id, account_id, name, owner_id, species, breed, status, photo_urls,
      category, tags, version, created_at, updated_at, status_omitted)
    select id, id, account_id, name, owner_id, species, breed, status, photo_urls,
      category, tags, version, created_at, updated_at, status_omitted
    from pets_old`.execute(db)

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

  // The indexes went with the old tables; the same ones again, ordered by seq as on PostgreSQL.
  await db.schema.createIndex('pets_account_id').on('pets').columns(['account_id', 'seq']).execute()
  await db.schema
    .createIndex('pets_account_status')
    .on('pets')
    .columns(['account_id', 'status', 'seq'])
    .execute()
  await db.schema
    .createIndex('pets_account_species')
    .on('pets')
    .columns(['account_id', 'species', 'seq'])
    .execute()
  await db.schema.createIndex('pets_owner').on('pets').columns(['owner_id', 'seq']).execute()
  await db.schema
    .createIndex('pet_images_account')
    .on('pet_images')
    .columns(['account_id', 'size_bytes'])
    .execute()
  await db.schema.createIndex('pet_images_pet').on('pet_images').column('pet_id').execute()
}

/** Per-account ids cannot go back to one global sequence without renumbering pets. */
export async function down(): Promise<void> {
  throw new Error('2026-11-24T09-pets-per-account cannot be undone.')
}
