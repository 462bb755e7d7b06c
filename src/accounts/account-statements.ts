import { type RawBuilder, sql } from 'kysely'

/**
 * The accounts SQL that another feature's query embeds, so that it stays one query: the
 * dashboard reads a session, its account's email and its sandbox together
 * (src/dashboard/sessions-repository.ts).
 */

/** The email of the account whose id is in `accountIdColumn` (`table.column`); null if none. */
export function emailOfAccount(accountIdColumn: string): RawBuilder<string | null> {
  return sql<
    string | null
  >`(select accounts.email from accounts where accounts.id = ${sql.ref(accountIdColumn)})`
}

/** The id of the sandbox of the live account whose id is in `accountIdColumn`; null if it has none. */
export function sandboxOfAccount(accountIdColumn: string): RawBuilder<string | null> {
  return sql<
    string | null
  >`(select sandbox.id from accounts as sandbox where sandbox.live_account_id = ${sql.ref(accountIdColumn)})`
}
