import { POSTGRES_URL, postgresReachable } from '../helpers/postgres.ts'

export default async function setup(): Promise<void> {
  if (await postgresReachable()) return
  if (process.env.REQUIRE_POSTGRES === '1') {
    throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} does not answer.`)
  }
  const bar = '!'.repeat(78)
  console.warn(
    `\n${bar}\n!! PostgreSQL at ${POSTGRES_URL} does not answer: the whole "postgres" project is SKIPPED.\n!! Set TEST_POSTGRES_URL or start a server; CI sets REQUIRE_POSTGRES=1 and fails instead.\n${bar}\n`,
  )
}
