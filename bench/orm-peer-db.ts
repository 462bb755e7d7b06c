import BetterSqlite3 from 'better-sqlite3'
import { eq } from 'drizzle-orm'
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3'
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres'
import { bigint, bigserial, index, jsonb, pgSchema, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { integer, index as sqliteIndex, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import pg from 'pg'
import type { PetBody } from './peer-http.ts'

/**
 * The ORM peer's data (orm-peer-server.ts) in Drizzle's idiom: a table of API keys (a SHA-256
 * of each), pets and their events, declared once per dialect, and the three things the route
 * needs. Queries are Drizzle's defaults, not prepared ahead (`.prepare()`), as a first version
 * of such a service would write them. The tables are created at start by their DDL (in a real
 * project, a migration drizzle-kit generates from these declarations).
 */
export interface PeerStore {
  /** The account whose key has this hash, if any. */
  accountOf(keyHash: string): Promise<string | undefined>
  /** The pet and its `pet.created` event, in one transaction. */
  createPet(accountId: string, body: PetBody): Promise<unknown>
  seedKey(accountId: string, keyHash: string): Promise<void>
}

const EVENT_TYPE = 'pet.created'

const sqliteKeys = sqliteTable('api_keys', {
  id: integer('id').primaryKey(),
  accountId: sqliteText('account_id').notNull(),
  keyHash: sqliteText('key_hash').notNull().unique(),
})
const sqlitePets = sqliteTable(
  'pets',
  {
    id: integer('id').primaryKey(),
    accountId: sqliteText('account_id').notNull(),
    name: sqliteText('name').notNull(),
    species: sqliteText('species').notNull(),
    breed: sqliteText('breed'),
    status: sqliteText('status').notNull().default('available'),
    createdAt: integer('created_at', { mode: 'timestamp_ms' })
      .notNull()
      .$defaultFn(() => new Date()),
  },
  (t) => [sqliteIndex('pets_account_id_idx').on(t.accountId)],
)
const sqliteEvents = sqliteTable(
  'events',
  {
    id: integer('id').primaryKey(),
    accountId: sqliteText('account_id').notNull(),
    type: sqliteText('type').notNull(),
    petId: integer('pet_id')
      .notNull()
      .references(() => sqlitePets.id),
    data: sqliteText('data', { mode: 'json' }).notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' })
      .notNull()
      .$defaultFn(() => new Date()),
  },
  (t) => [sqliteIndex('events_pet_id_idx').on(t.petId)],
)

/** A file of its own, with the service's durability (WAL, synchronous=NORMAL). */
export function sqliteStore(path: string): PeerStore {
  const client = new BetterSqlite3(path)
  client.pragma('journal_mode = WAL')
  client.pragma('synchronous = NORMAL')
  client.exec(`
    create table if not exists api_keys (id integer primary key, account_id text not null,
      key_hash text not null unique);
    create table if not exists pets (id integer primary key, account_id text not null,
      name text not null, species text not null, breed text,
      status text not null default 'available', created_at integer not null);
    create index if not exists pets_account_id_idx on pets (account_id);
    create table if not exists events (id integer primary key, account_id text not null,
      type text not null, pet_id integer not null references pets (id), data text not null,
      created_at integer not null);
    create index if not exists events_pet_id_idx on events (pet_id);`)
  const db = drizzleSqlite({ client })
  return {
    async accountOf(keyHash) {
      const key = db
        .select({ accountId: sqliteKeys.accountId })
        .from(sqliteKeys)
        .where(eq(sqliteKeys.keyHash, keyHash))
        .get()
      return key?.accountId
    },
    // better-sqlite3 is synchronous: Drizzle's transaction over it takes a synchronous callback.
    async createPet(accountId, body) {
      return db.transaction((tx) => {
        const pet = tx
          .insert(sqlitePets)
          .values({ accountId, name: body.name, species: body.species, breed: body.breed })
          .returning()
          .get()
        tx.insert(sqliteEvents).values({ accountId, type: EVENT_TYPE, petId: pet.id, data: pet }).run()
        return pet
      })
    },
    async seedKey(accountId, keyHash) {
      db.insert(sqliteKeys).values({ accountId, keyHash }).onConflictDoNothing().run()
    },
  }
}

const schema = pgSchema('orm_peer')
const postgresKeys = schema.table('api_keys', {
  id: serial('id').primaryKey(),
  accountId: text('account_id').notNull(),
  keyHash: text('key_hash').notNull().unique(),
})
const postgresPets = schema.table(
  'pets',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: text('account_id').notNull(),
    name: text('name').notNull(),
    species: text('species').notNull(),
    breed: text('breed'),
    status: text('status').notNull().default('available'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('pets_account_id_idx').on(t.accountId)],
)
const postgresEvents = schema.table(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: text('account_id').notNull(),
    type: text('type').notNull(),
    petId: bigint('pet_id', { mode: 'number' })
      .notNull()
      .references(() => postgresPets.id),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('events_pet_id_idx').on(t.petId)],
)

/** A pg Pool of the service's default size (DB_POOL_SIZE, 10), a schema of its own. */
export async function postgresStore(url: string): Promise<PeerStore> {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  await pool.query(`
    create schema if not exists orm_peer;
    create table if not exists orm_peer.api_keys (id serial primary key,
      account_id text not null, key_hash text not null unique);
    create table if not exists orm_peer.pets (id bigserial primary key, account_id text not null,
      name text not null, species text not null, breed text,
      status text not null default 'available', created_at timestamptz not null default now());
    create index if not exists pets_account_id_idx on orm_peer.pets (account_id);
    create table if not exists orm_peer.events (id bigserial primary key,
      account_id text not null, type text not null,
      pet_id bigint not null references orm_peer.pets (id), data jsonb not null,
      created_at timestamptz not null default now());
    create index if not exists events_pet_id_idx on orm_peer.events (pet_id);`)
  const db = drizzlePostgres({ client: pool })
  return {
    async accountOf(keyHash) {
      const [key] = await db
        .select({ accountId: postgresKeys.accountId })
        .from(postgresKeys)
        .where(eq(postgresKeys.keyHash, keyHash))
        .limit(1)
      return key?.accountId
    },
    async createPet(accountId, body) {
      return db.transaction(async (tx) => {
        const [pet] = await tx
          .insert(postgresPets)
          .values({ accountId, name: body.name, species: body.species, breed: body.breed })
          .returning()
        await tx.insert(postgresEvents).values({ accountId, type: EVENT_TYPE, petId: pet!.id, data: pet })
        return pet
      })
    },
    async seedKey(accountId, keyHash) {
      await db.insert(postgresKeys).values({ accountId, keyHash }).onConflictDoNothing()
    },
  }
}
