import { writeFileSync } from 'node:fs'
import BetterSqlite3 from 'better-sqlite3'

/**
 * Adds `count` pets of the account (and the `pet.created` event each would have written)
 * straight into the SQLite file, with the service stopped: one transaction, one prepared
 * statement each, the rows generated inside SQLite. About 10 s per million here.
 */
export function seedSqlitePets(
  path: string,
  email: string,
  count: number,
): { seconds: number; total: number } {
  const started = performance.now()
  const db = new BetterSqlite3(path)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('cache_size = -200000')
    const account = db.prepare('select id from accounts where email = ?').get(email) as
      | { id: string }
      | undefined
    if (account === undefined) throw new Error(`no account ${email} to seed pets for`)
    const at = new Date().toISOString()
    // Ids are per account (src/db/account-ids.ts): the seeded pets take the account's next ones,
    // and its counter moves past them, as the service's own creates would have left it.
    const { lastSeq, lastId } = db
      .prepare(
        'select (select coalesce(max(seq), 0) from pets) as lastSeq, coalesce(max(id), 0) as lastId from pets where account_id = ?',
      )
      .get(account.id) as { lastSeq: number; lastId: number }
    const pets = db.prepare(`
      with recursive n(i) as (select 1 union all select i + 1 from n limit ?)
      insert into pets (id, account_id, name, owner_id, species, breed, status, photo_urls, category, tags,
                        version, created_at, updated_at)
      select ? + i, ?, 'Seed ' || i, null, case i % 3 when 0 then 'cat' else 'dog' end, null, 'available', '[]',
             null, null, 1, ?, ? from n`)
    const events = db.prepare(`
      insert into events (id, account_id, type, object_id, data, previous_attributes, created_at)
      select 'evt_seed' || seq, account_id, 'pet.created', cast(id as text),
             json_object('id', id, 'object', 'pet', 'name', name, 'status', status), null, created_at
      from pets where seq > ?`)
    const counter = db.prepare(
      "update account_sequences set next_id = max(next_id, ?) where account_id = ? and kind = 'pet'",
    )
    db.transaction(() => {
      pets.run(count, lastId, account.id, at, at)
      events.run(lastSeq)
      counter.run(lastId + count + 1, account.id)
    })()
    db.pragma('wal_checkpoint(TRUNCATE)')
    const total = (db.prepare('select count(*) as n from pets').get() as { n: number }).n
    return { seconds: (performance.now() - started) / 1000, total }
  } finally {
    db.close()
  }
}

/** A json-server 0.17 database file holding `count` pets shaped like ours. */
export function writeJsonServerDb(path: string, count: number): void {
  const at = new Date().toISOString()
  const pets = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `Seed ${i + 1}`,
    species: i % 3 === 0 ? 'cat' : 'dog',
    status: 'available',
    photo_urls: [],
    created_at: at,
  }))
  writeFileSync(path, JSON.stringify({ pets }, null, 2))
}
