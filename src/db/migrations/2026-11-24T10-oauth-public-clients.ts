// Frozen: this migration must never change once released, nor import application code.
import type { Kysely } from 'kysely'

/**
 * Public OAuth clients (browser and mobile apps, RFC 6749 §2.1): no secret, PKCE required. Every
 * client registered before is confidential. A public client's `secret_hash` is the empty string:
 * the column stays NOT NULL (relaxing it would mean rebuilding the table on SQLite), and no
 * presented secret hashes to it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('client_type', 'text', (c) => c.notNull().defaultTo('confidential'))
    .execute()
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').dropColumn('client_type').execute()
}
