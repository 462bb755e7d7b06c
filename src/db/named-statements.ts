import { createHash } from 'node:crypto'

/**
 * Names for the SQL of the queries prepared once (src/db/prepared-query.ts), so that PostgreSQL
 * parses and plans each once per connection (node-postgres sends Parse the first time only:
 * https://node-postgres.com/features/queries#prepared-statements); other SQL goes unnamed. A name
 * is made from its SQL text: docs/ARCHITECTURE.md, "Under the repositories", says why.
 */
const names = new Map<string, string>()

/** Gives `sql` a statement name, once. */
export function nameStatement(sql: string): void {
  if (!names.has(sql))
    names.set(sql, `pet_service_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`)
}

/** The statement name of `sql`, if it was named. */
export function statementName(sql: string): string | undefined {
  return names.get(sql)
}

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed under it (a
 * migration of a newer version added a column to a table it selects `*` from, while this
 * process keeps serving): SQLSTATE 0A000, "cached plan must not change result type", raised by
 * the plan cache's revalidation. Told by the routine that raised it, which, unlike the message,
 * does not follow the server's `lc_messages`. Its connection must be dropped.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, routine } = (error ?? {}) as { code?: unknown; routine?: unknown }
  return code === '0A000' && routine === 'RevalidateCachedQuery'
}

/**
 * The server connection does not have a statement this connection prepared (26000,
 * invalid_sql_statement_name), or already has one by the name it prepares now (42P05,
 * duplicate_prepared_statement): a pooler in transaction mode ran the query on another server
 * connection than the one that parsed it (PgBouncer before 1.21, or without
 * `max_prepared_statements`).
 */
export function isMisplacedPreparedStatement(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown }
  return code === '26000' || code === '42P05'
}
