// node --import tsx bench/migrate-1m.ts [--pets N] [--postgres URL]
//
// The newest migration on a database the size of the bench's: seeds N pets (default 1,000,000)
// and their events at the migration before it (bench/seed.ts on SQLite; the same rows generated
// in SQL on PostgreSQL), with owners on some pets and images on some, copies the database,
// migrates the copy and checks that nothing was lost: the row counts and a SHA-256 of every
// column of pets, events and pet_images, the same before and after, and (SQLite) the
// integrity and foreign-key checks. Prints what it measured as JSON.
import { createHash } from 'node:crypto'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import BetterSqlite3 from 'better-sqlite3'
import { type Kysely, Migrator, sql } from 'kysely'
import pg from 'pg'
import { openDatabase } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { migrations } from '../src/db/migrations/index.ts'
import type { Database } from '../src/db/schema.ts'
import { seedSqlitePets } from './seed.ts'

const { values: args } = parseArgs({
  options: { pets: { type: 'string', default: '1000000' }, postgres: { type: 'string' } },
})
const PETS = Number(args.pets)
const names = Object.keys(migrations)
const PREVIOUS = names.at(-2)!
const EMAIL = 'bench@example.com'
const ACCOUNT = 'acct_migrate1m'
const at = new Date().toISOString()

/** The columns compared before and after, each table in a stable order. */
const TABLES = {
  pets: `select seq, id, account_id, name, owner_id, species, breed, status, photo_urls, category, tags,
           version, created_at, updated_at, status_omitted from pets order by seq`,
  events: `select seq, id, account_id, type, object_id, data, previous_attributes, created_at
           from events order by seq`,
  pet_images: `select name, account_id, pet_id, content_type, size_bytes, data, created_at
               from pet_images order by name`,
} as const

type Digest = Record<keyof typeof TABLES, { rows: number; sha256: string }>

function digestRows(rows: Iterable<unknown>): { rows: number; sha256: string } {
  const hash = createHash('sha256')
  let count = 0
  for (const row of rows) {
    // Numbers as text: PostgreSQL's bigint arrives as a string, SQLite's integer as a number.
    hash.update(
      JSON.stringify(
        Object.values(row as object).map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v))),
      ),
    )
    hash.update('\n')
    count++
  }
  return { rows: count, sha256: hash.digest('hex') }
}

async function atPrevious(db: Kysely<Database>): Promise<void> {
  const result = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(
    PREVIOUS,
  )
  if (result.error !== undefined) throw result.error
}

/** Owners on every tenth pet, and an image on every thousandth (both rewritten by the migration). */
const extras = (png: string) => [
  `insert into users (id, account_id, name, version, created_at, updated_at, username, petstore_id)
   select 'usr_m' || n, '${ACCOUNT}', 'Owner ' || n, 1, '${at}', '${at}', 'owner' || n, n
   from (select id as n from pets where id <= 100) owners`,
  `update pets set owner_id = 'usr_m' || (id % 100 + 1) where id % 10 = 0`,
  `insert into pet_images (name, account_id, pet_id, content_type, size_bytes, data, created_at)
   select id || '-img.png', account_id, id, 'image/png', 4, ${png}, '${at}' from pets where id % 1000 = 0`,
]

async function sqlite(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'migrate-1m-'))
  try {
    const original = join(dir, 'seed.db')
    const seedHandle = openDatabase(`sqlite:${original}`)
    await atPrevious(seedHandle.db)
    await seedHandle.close()
    const raw = new BetterSqlite3(original)
    raw.prepare('insert into accounts (id, email, created_at) values (?, ?, ?)').run(ACCOUNT, EMAIL, at)
    raw.close()
    const seeded = seedSqlitePets(original, EMAIL, PETS)
    const more = new BetterSqlite3(original)
    for (const statement of extras(`X'89504E47'`)) more.exec(statement)
    more.pragma('wal_checkpoint(TRUNCATE)')
    const before = digest(more)
    more.close()

    const copy = join(dir, 'copy.db')
    copyFileSync(original, copy)
    const handle = openDatabase(`sqlite:${copy}`)
    const started = performance.now()
    const applied = await migrateToLatest(handle.db)
    const seconds = (performance.now() - started) / 1000
    await handle.close()

    const check = new BetterSqlite3(copy)
    const after = digest(check)
    const integrity = check.pragma('integrity_check', { simple: true })
    const foreignKeys = check.pragma('foreign_key_check') as unknown[]
    const sequence = check.prepare("select count(*) as n from sqlite_sequence where name = 'pets'").get() as {
      n: number
    }
    check.close()
    return {
      dialect: 'sqlite',
      pets: PETS,
      seedSeconds: Number(seeded.seconds.toFixed(1)),
      migration: applied,
      migrationSeconds: Number(seconds.toFixed(2)),
      before,
      after,
      same: JSON.stringify(before) === JSON.stringify(after),
      integrity,
      foreignKeyViolations: foreignKeys.length,
      petsSequenceRows: sequence.n,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function digest(db: BetterSqlite3.Database): Digest {
  const out = {} as Digest
  for (const [table, query] of Object.entries(TABLES) as [keyof typeof TABLES, string][]) {
    out[table] = digestRows(db.prepare(query).raw(false).iterate())
  }
  return out
}

async function postgres(url: string): Promise<Record<string, unknown>> {
  // A database of its own, copied with CREATE DATABASE … TEMPLATE (the copy PostgreSQL offers).
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const suffix = `${process.pid}`
  const original = `migrate_seed_${suffix}`
  const copy = `migrate_copy_${suffix}`
  const urlOf = (name: string) => {
    const u = new URL(url)
    u.pathname = `/${name}`
    return u.toString()
  }
  try {
    await admin.query(`create database ${original}`)
    const seedHandle = openDatabase(urlOf(original))
    await atPrevious(seedHandle.db)
    const seedStarted = performance.now()
    await sql`insert into accounts (id, email, created_at) values (${ACCOUNT}, ${EMAIL}, ${at})`.execute(
      seedHandle.db,
    )
    await sql`insert into pets (id, account_id, name, owner_id, species, breed, status, photo_urls, category, tags,
                                version, created_at, updated_at)
              select i, ${ACCOUNT}, 'Seed ' || i, null, case i % 3 when 0 then 'cat' else 'dog' end, null,
                     'available', '[]', null, null, 1, ${at}, ${at}
              from generate_series(1, ${PETS}) as i`.execute(seedHandle.db)
    await sql`insert into events (id, account_id, type, object_id, data, previous_attributes, created_at)
              select 'evt_seed' || seq, account_id, 'pet.created', id::text,
                     json_build_object('id', id, 'object', 'pet', 'name', name, 'status', status)::text, null, created_at
              from pets order by seq`.execute(seedHandle.db)
    for (const statement of extras(`'\\x89504e47'::bytea`)) await sql.raw(statement).execute(seedHandle.db)
    await sql`vacuum analyze`.execute(seedHandle.db)
    const seedSeconds = (performance.now() - seedStarted) / 1000
    const before = await digestPostgres(urlOf(original))
    await seedHandle.close()

    await admin.query(`create database ${copy} template ${original}`)
    const handle = openDatabase(urlOf(copy))
    const started = performance.now()
    const applied = await migrateToLatest(handle.db)
    const seconds = (performance.now() - started) / 1000
    await handle.close()
    const after = await digestPostgres(urlOf(copy))
    return {
      dialect: 'postgres',
      pets: PETS,
      seedSeconds: Number(seedSeconds.toFixed(1)),
      migration: applied,
      migrationSeconds: Number(seconds.toFixed(2)),
      before,
      after,
      same: JSON.stringify(before) === JSON.stringify(after),
    }
  } finally {
    await admin.query(`drop database if exists ${copy}`)
    await admin.query(`drop database if exists ${original}`)
    await admin.end()
  }
}

async function digestPostgres(url: string): Promise<Digest> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const out = {} as Digest
    for (const [table, query] of Object.entries(TABLES) as [keyof typeof TABLES, string][]) {
      const { rows } = await client.query(query)
      out[table] = digestRows(rows)
    }
    return out
  } finally {
    await client.end()
  }
}

const result = args.postgres === undefined ? await sqlite() : await postgres(args.postgres)
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
