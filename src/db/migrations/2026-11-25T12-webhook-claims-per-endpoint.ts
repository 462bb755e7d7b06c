// Frozen: this migration must never change once released, nor import application code.
import { type Kysely, sql } from 'kysely'

/**
 * Webhook deliveries are claimed endpoint by endpoint (each endpoint's due deliveries in order),
 * so that one account's backlog never stands in front of another's: the due index is keyed by
 * endpoint first. The index by due time alone, which the claim read across all endpoints, goes
 * (every delivery written maintains each index).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on the schema of their own time, not today's types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_endpoint_due
    on webhook_deliveries (endpoint_id, next_attempt_at, seq)
    where status in ('pending', 'retrying')`.execute(db)
  await sql`drop index webhook_deliveries_due`.execute(db)
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at, seq)
    where status in ('pending', 'retrying')`.execute(db)
  await sql`drop index webhook_deliveries_endpoint_due`.execute(db)
}
