import { startPgBouncer } from '../helpers/pgbouncer.ts'
import { POSTGRES_URL, postgresReachable } from '../helpers/postgres.ts'

/**
 * Checks that PostgreSQL answers. With TEST_PGBOUNCER=transaction (or session), starts a
 * PgBouncer in that pool mode in front of it for the whole run: the apps under test connect
 * through it with DB_POOLER set to match, while schemas and roles are made directly.
 * TEST_PGBOUNCER_POOL_SIZE sets its pool size (5 by default).
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (!(await postgresReachable())) {
    if (process.env.REQUIRE_POSTGRES === '1') {
      throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} does not answer.`)
    }
    const bar = '!'.repeat(78)
    console.warn(
      `\n${bar}\n!! PostgreSQL at ${POSTGRES_URL} does not answer: the whole "postgres" project is SKIPPED.\n!! Set TEST_POSTGRES_URL or start a server; CI sets REQUIRE_POSTGRES=1 and fails instead.\n${bar}\n`,
    )
    return undefined
  }
  const mode = process.env.TEST_PGBOUNCER
  if (mode === undefined || mode === '') return undefined
  if (mode !== 'transaction' && mode !== 'session') {
    throw new Error(`TEST_PGBOUNCER=${mode} must be transaction or session (PgBouncer's pool_mode).`)
  }
  const pgbouncer = await startPgBouncer({
    mode,
    poolSize: Number(process.env.TEST_PGBOUNCER_POOL_SIZE ?? 5),
  })
  // Read by the test workers and the servers they start, which inherit this environment.
  process.env.TEST_POSTGRES_APP_URL = pgbouncer.url
  process.env.DB_POOLER = mode
  console.warn(`PostgreSQL tests connect through PgBouncer (pool_mode = ${mode}) at ${pgbouncer.url}`)
  return () => pgbouncer.stop()
}
