import pg from 'pg'
import type { DbPooler } from '../../src/config/config.ts'

/** The test PostgreSQL server, direct: schemas and roles are made and dropped through it. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * Where the apps under test connect: PostgreSQL itself, or the PgBouncer that the global setup
 * started in front of it when TEST_PGBOUNCER asks for one (test/setup/postgres-global.ts), with
 * the DB_POOLER it sets. Child processes read the same DB_POOLER from the environment.
 */
export const POSTGRES_APP_URL = process.env.TEST_POSTGRES_APP_URL ?? POSTGRES_URL
export const POOLER = (process.env.DB_POOLER ?? 'none') as DbPooler

/** True when the test PostgreSQL server accepts a connection within two seconds. */
export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}
