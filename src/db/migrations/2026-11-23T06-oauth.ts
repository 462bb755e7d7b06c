// Frozen: this migration must never change once released, nor import application code.
import type { Kysely } from 'kysely'

/**
 * The provider's browser sessions are now stored under the SHA-256 of their id (the `_session`
 * cookie), and Interactions no longer copy that id. Rows written before hold it in clear and can
 * no longer be found: delete them. Whoever was signed in to the authorisation server signs in
 * again; a sign-in under way (an Interaction lives an hour) starts over.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('oauth_store').where('model', 'in', ['Session', 'Interaction']).execute()
}

/** Nothing to restore: the deleted rows could not be used any more. */
export async function down(): Promise<void> {}
