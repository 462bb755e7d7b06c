// node --import tsx bench/peer-server.ts sqlite|postgres
//
// The peer: what a careful team would hand-write instead of adopting the service — Fastify 5,
// @fastify/formbody, one `POST /v1/pet` route with a JSON schema for the form body, one
// `INSERT … RETURNING` and the row as JSON, 201. No authentication, no event, no idempotency,
// no request log. It runs in a process of its own, like the bare server.
//   sqlite:   DATABASE_PATH, a file of its own; one statement prepared once; the service's
//             durability (WAL, synchronous=NORMAL: a commit survives kill -9, not a power loss).
//   postgres: DATABASE_URL; a pg Pool of 10 (the service's pool size), a table of its own in
//             a schema of its own.
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { type PetBody, petBodySchema, servePeer } from './peer-http.ts'

const mode = process.argv[2]

interface PetRow {
  id: number
  name: string
  species: string
  breed: string | null
  created_at: string
}

async function sqliteInsert(): Promise<(body: PetBody) => Promise<PetRow>> {
  const path = process.env.DATABASE_PATH
  if (path === undefined) throw new Error('DATABASE_PATH is required in sqlite mode')
  const db = new BetterSqlite3(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(`create table if not exists peer_pets (
    id integer primary key, name text not null, species text not null, breed text,
    created_at text not null)`)
  const insert = db.prepare<[string, string, string | null, string], PetRow>(
    'insert into peer_pets (name, species, breed, created_at) values (?, ?, ?, ?) returning *',
  )
  return async (body) => insert.get(body.name, body.species, body.breed ?? null, new Date().toISOString())!
}

async function postgresInsert(): Promise<(body: PetBody) => Promise<PetRow>> {
  const url = process.env.DATABASE_URL
  if (url === undefined) throw new Error('DATABASE_URL is required in postgres mode')
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  await pool.query(`create schema if not exists peer;
    create table if not exists peer.peer_pets (
      id bigserial primary key, name text not null, species text not null, breed text,
      created_at timestamptz not null default now())`)
  const text = 'insert into peer.peer_pets (name, species, breed) values ($1, $2, $3) returning *'
  // A named statement: pg prepares it once per connection, as a cached statement.
  return async (body) =>
    (
      await pool.query<PetRow>({
        name: 'insert-pet',
        text,
        values: [body.name, body.species, body.breed ?? null],
      })
    ).rows[0]!
}

const insert =
  mode === 'sqlite' ? await sqliteInsert() : mode === 'postgres' ? await postgresInsert() : undefined
if (insert === undefined) throw new Error('usage: peer-server.ts sqlite|postgres')

await servePeer((app) => {
  app.post<{ Body: PetBody }>('/v1/pet', { schema: { body: petBodySchema } }, async (request, reply) => {
    reply.code(201)
    return insert(request.body)
  })
})
