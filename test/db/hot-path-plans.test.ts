import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'

/**
 * Every index and unique key of the hot tables (pets, events, pet_images, idempotency_keys,
 * account_sequences, api_keys) and the query that needs it, as each dialect plans it
 * (migration 2026-11-27T12-hot-path-schema, bench/README.md "The hot path's schema"). Each query
 * is the repository's, written out with literal values; dropping or reshaping the index it names
 * fails here. SQLite: EXPLAIN QUERY PLAN, which must name the index and neither scan the table
 * nor sort in a temporary b-tree. PostgreSQL: EXPLAIN with sequential scans and sorts priced out
 * (enable_seqscan, enable_sort off), as the planner would choose on a large table; it must name
 * the index and neither scan the table nor sort.
 */

/** Index names, where the dialects name a key's index differently. */
const KEYS =
  DIALECT === 'postgres'
    ? {
        pet: 'pets_account_pet',
        event: 'events_id_key',
        eventSeq: 'events_pkey',
        eventsInOrder: 'events_pkey',
        image: 'pet_images_pkey',
        idempotency: 'idempotency_keys_pk',
        sequence: 'account_sequences_pkey',
        keyHash: 'api_keys_key_hash_key',
        keyId: 'api_keys_pkey',
      }
    : {
        pet: 'sqlite_autoindex_pets_1',
        event: 'sqlite_autoindex_events_1',
        eventSeq: 'INTEGER PRIMARY KEY',
        // The table itself in rowid order, stopping at the LIMIT: no index, and no sort either.
        eventsInOrder: 'SCAN events',
        image: 'sqlite_autoindex_pet_images_1',
        idempotency: 'sqlite_autoindex_idempotency_keys_1',
        sequence: 'sqlite_autoindex_account_sequences_1',
        keyHash: 'sqlite_autoindex_api_keys_2',
        keyId: 'sqlite_autoindex_api_keys_1',
      }

/** [what, the repository's query, the index it must use]. */
const PLANS: [string, string, string][] = [
  // pets (src/pets/pets-repository.ts, src/db/account-ids.ts)
  ['a pet read', `select * from pets where account_id = 'a' and id = 7`, KEYS.pet],
  [
    "a pet's update",
    `update pets set name = 'x', version = 2 where account_id = 'a' and id = 7 and version = 1`,
    KEYS.pet,
  ],
  ["a pet's delete", `delete from pets where account_id = 'a' and id = 7`, KEYS.pet],
  ['a list cursor (seqOf)', `select seq from pets where account_id = 'a' and id = 7`, KEYS.pet],
  ["the account's highest pet id (account-ids)", `select max(id) from pets where account_id = 'a'`, KEYS.pet],
  [
    'the list, newest first',
    `select * from pets where account_id = 'a' and seq < 100 order by seq desc limit 11`,
    'pets_account_id',
  ],
  [
    'findByTags, oldest first in batches',
    `select * from pets where account_id = 'a' and seq > 100 order by seq asc limit 500`,
    'pets_account_id',
  ],
  [
    'the list by status',
    `select * from pets where account_id = 'a' and status = 'sold' and seq < 100 order by seq desc limit 11`,
    'pets_account_status',
  ],
  [
    'the counts by status (dashboard)',
    `select status, count(*) from pets where account_id = 'a' group by status`,
    'pets_account_status',
  ],
  [
    'the list by species',
    `select * from pets where account_id = 'a' and species = 'cat' and seq < 100 order by seq desc limit 11`,
    'pets_account_species',
  ],
  [
    "the account's species (dashboard filter)",
    `select distinct species from pets where account_id = 'a' and species is not null order by species limit 100`,
    'pets_account_species',
  ],
  [
    'the list by owner',
    `select * from pets where owner_id = 'usr_1' and account_id = 'a' and seq < 100 order by seq desc limit 11`,
    'pets_owner',
  ],
  [
    "a user's delete: its pets (the foreign key's check)",
    `select 1 from pets where owner_id = 'usr_1'`,
    'pets_owner',
  ],
  // pet_images (src/pets/images-repository.ts)
  ['an image read', `select content_type, size_bytes from pet_images where name = 'x.png'`, KEYS.image],
  [
    "the account's image storage",
    `select coalesce(sum(size_bytes), 0) from pet_images where account_id = 'a'`,
    'pet_images_account_pet',
  ],
  [
    "a pet's images pruned, or deleted with it (the foreign key's cascade)",
    `delete from pet_images where account_id = 'a' and pet_id = 7`,
    'pet_images_account_pet',
  ],
  // events (src/events/events-repository.ts, src/db/purge-oldest.ts)
  ['an event read', `select * from events where id = 'evt_1' and account_id = 'a'`, KEYS.event],
  [
    'the events list, newest first',
    `select * from events where account_id = 'a' and seq < 100 order by seq desc limit 11`,
    'events_account_seq',
  ],
  [
    "a stream's replay",
    `select * from events where account_id = 'a' and seq > 100 order by seq asc limit 100`,
    'events_account_seq',
  ],
  [
    "an account's events deleted (sandbox reset)",
    `delete from events where account_id = 'a'`,
    'events_account_seq',
  ],
  ['the stream poller', `select * from events where seq > 100 order by seq asc limit 100`, KEYS.eventSeq],
  [
    'the purge, oldest first',
    `select seq, created_at from events order by seq asc limit 100`,
    KEYS.eventsInOrder,
  ],
  // idempotency_keys (src/idempotency/idempotency-repository.ts)
  [
    'a key looked up',
    `select * from idempotency_keys where account_id = 'a' and key = 'k'`,
    KEYS.idempotency,
  ],
  [
    'expired keys purged',
    `delete from idempotency_keys where created_at < '2026-01-01'`,
    'idempotency_keys_created',
  ],
  // account_sequences (src/db/account-ids.ts)
  [
    'a block of ids reserved',
    `update account_sequences set next_id = next_id + 64 where account_id = 'a' and kind = 'pet'`,
    KEYS.sequence,
  ],
  // api_keys (src/keys/keys-repository.ts)
  ['a key authenticated', `select * from api_keys where key_hash = 'h'`, KEYS.keyHash],
  ['a key by id', `select * from api_keys where id = 'key_1'`, KEYS.keyId],
  [
    "the account's keys",
    `select * from api_keys where account_id = 'a' order by created_at desc limit 100`,
    'api_keys_account',
  ],
]

describeDb('the hot tables: each index and the query that uses it', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.destroy())

  async function plan(query: string): Promise<string> {
    if (DIALECT === 'sqlite') {
      const { rows } = await sql<{ detail: string }>`explain query plan ${sql.raw(query)}`.execute(t.db)
      return rows.map((r) => r.detail).join('\n')
    }
    // A transaction, so that SET LOCAL ends with it, and EXPLAIN without ANALYZE runs nothing.
    return t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx)
      await sql`set local enable_sort = off`.execute(trx)
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${sql.raw(query)}`.execute(trx)
      return rows.map((r) => r['QUERY PLAN']).join('\n')
    })
  }

  it.each(PLANS)('%s', async (_what, query, index) => {
    const text = await plan(query)
    if (DIALECT === 'sqlite' && index.startsWith('SCAN ')) {
      expect(text).toBe(index)
    } else if (DIALECT === 'sqlite') {
      expect(text).toContain(index === 'INTEGER PRIMARY KEY' ? index : `INDEX ${index}`)
      // A bare "SCAN pets" (no index after it) reads the whole table.
      expect(text).not.toMatch(/SCAN \w+$/m)
      expect(text).not.toContain('TEMP B-TREE')
    } else {
      expect(text).toMatch(
        new RegExp(`Index (Only )?Scan(?: Backward)? using ${index} on|Bitmap Index Scan on ${index}`),
      )
      expect(text).not.toContain('Seq Scan')
      expect(text).not.toMatch(/^\s*(->\s*)?Sort\b/m)
    }
  })
})
