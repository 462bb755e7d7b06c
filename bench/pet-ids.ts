import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'

/**
 * The ids of an account's pets, ascending, read from the database the service runs on. Ids are
 * per account and not dense (a process reserves them in blocks and forfeits the rest of a block
 * when it stops, src/db/account-ids.ts), so the read, update and list cases draw from the ids
 * that exist rather than from 1 to the newest: a gap would answer 404, or 400 as a list cursor.
 */
export async function petIdsOf(databaseUrl: string, email: string): Promise<number[]> {
  const query = `select p.id from pets p join accounts a on a.id = p.account_id where a.email = $email order by p.id`
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true })
    try {
      return db.prepare(query).pluck().all({ email }) as number[]
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const result = await client.query<{ id: string }>(query.replace('$email', '$1'), [email])
    return result.rows.map((row) => Number(row.id))
  } finally {
    await client.end()
  }
}
