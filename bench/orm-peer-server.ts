// node dist/bench-orm-peer-server.js sqlite|postgres
//
// The ORM peer: the service a TypeScript team would build in an afternoon for the same create —
// Fastify 5, @fastify/formbody, Drizzle ORM (orm-peer-db.ts). `POST /v1/pet` takes the API key
// as the Basic user name (as the service does), looks its SHA-256 up in a keys table through
// the ORM on every request (401 without a known key), and inserts the pet and its event in one
// transaction; 201 with the pet as JSON. No idempotency, no request log. A process of its own,
// like the other peers.
//   sqlite:   DATABASE_PATH, a file of its own (WAL, synchronous=NORMAL).
//   postgres: DATABASE_URL; a pg Pool of 10 (the service's pool size), the schema `orm_peer`.
// SEED_API_KEY: a key to store (its hash) at start, for the bench account.
import { createHash } from 'node:crypto'
import { type PeerStore, postgresStore, sqliteStore } from './orm-peer-db.ts'
import { type PetBody, petBodySchema, servePeer } from './peer-http.ts'

const ACCOUNT = 'bench'

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** The user name of a Basic authorization header: the API key. */
function apiKeyOf(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.startsWith('Basic ')) return undefined
  const decoded = Buffer.from(authorization.slice('Basic '.length), 'base64').toString('utf8')
  const user = decoded.split(':')[0]
  return user === '' ? undefined : user
}

async function openStore(mode: string | undefined): Promise<PeerStore> {
  if (mode === 'sqlite') {
    const path = process.env.DATABASE_PATH
    if (path === undefined) throw new Error('DATABASE_PATH is required in sqlite mode')
    return sqliteStore(path)
  }
  if (mode === 'postgres') {
    const url = process.env.DATABASE_URL
    if (url === undefined) throw new Error('DATABASE_URL is required in postgres mode')
    return postgresStore(url)
  }
  throw new Error('usage: orm-peer-server.ts sqlite|postgres')
}

const store = await openStore(process.argv[2])
const seed = process.env.SEED_API_KEY
if (seed !== undefined) await store.seedKey(ACCOUNT, sha256(seed))

await servePeer((app) => {
  app.post<{ Body: PetBody }>('/v1/pet', { schema: { body: petBodySchema } }, async (request, reply) => {
    const key = apiKeyOf(request.headers.authorization)
    const accountId = key === undefined ? undefined : await store.accountOf(sha256(key))
    if (accountId === undefined) return reply.code(401).send({ error: 'a valid API key is required' })
    reply.code(201)
    return store.createPet(accountId, request.body)
  })
})
