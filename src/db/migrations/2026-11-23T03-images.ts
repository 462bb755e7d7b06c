// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Uploaded pet images, in the database so that every instance serves the same ones (they were
 * files under the data folder of the instance that received them). The image dies with its pet
 * (and account); its URL's last segment is `name`.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await sql`
    create table pet_images (
      name text primary key,
      account_id text not null references accounts(id) on delete cascade,
      pet_id ${postgres ? sql`bigint` : sql`integer`} not null references pets(id) on delete cascade,
      content_type text not null,
      size_bytes integer not null,
      data ${postgres ? sql`bytea` : sql`blob`} not null,
      created_at text not null
    )`.execute(db)
  // The per-account quota sums size_bytes without reading the images.
  await db.schema
    .createIndex('pet_images_account')
    .on('pet_images')
    .columns(['account_id', 'size_bytes'])
    .execute()
  // Deleting a pet finds its images (the foreign key's cascade) without a scan.
  await db.schema.createIndex('pet_images_pet').on('pet_images').column('pet_id').execute()
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('pet_images').execute()
}
