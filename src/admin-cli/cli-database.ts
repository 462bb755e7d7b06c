import { existsSync } from 'node:fs'
import { sql } from 'kysely'
import { type Config, sqlitePath } from '../config/config.ts'
import { type DatabaseHandle, databaseTimeouts, openDatabase, poolerSettings } from '../db/database.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { type CliIo, UsageError } from './cli-io.ts'

/**
 * Opens the database an admin command works on and says which one, every time, on stderr
 * ("database: sqlite:/abs/path", "(created now)" when it did not exist). Only `migrate` (and
 * `serve`) may create one: any other command refuses a database that does not exist yet, since
 * that is nearly always the wrong folder or a mistyped DATABASE_URL, and a key or an account
 * written there would be silently lost to the running service.
 */
export async function openForCommand(
  config: Config,
  io: CliIo,
  options: { mayCreate: boolean },
): Promise<DatabaseHandle> {
  const url = config.databaseUrl
  const file = url.startsWith('sqlite:') ? sqlitePath(url) : undefined
  const isNewFile = file !== undefined && file !== ':memory:' && !existsSync(file)
  if (isNewFile && !options.mayCreate) throw new UsageError(missing(`No database at ${file}`, url))
  // An admin command is not a request: its statements (a migration, say) may run as long as they need.
  const database = openDatabase(url, {
    timeouts: { ...databaseTimeouts(config), statementMs: 0 },
    pooler: poolerSettings(config),
    onWarning: (message) => io.err(message),
  })
  try {
    const empty = file === undefined && !(await hasSchema(database))
    if (empty && !options.mayCreate)
      throw new UsageError(missing(`${database.location} has no tables`, database.location))
    await migrateToLatest(database.db)
    io.err(`database: ${database.location}${isNewFile || empty ? ' (created now)' : ''}`)
    return database
  } catch (error) {
    await database.close()
    throw error
  }
}

async function hasSchema(database: DatabaseHandle): Promise<boolean> {
  // to_regclass follows the search_path, so a test's or tenant's schema is the one asked about.
  const { rows } = await sql<{ t: string | null }>`select to_regclass('kysely_migration') as t`.execute(
    database.db,
  )
  return rows[0]?.t != null
}

/** `shown` is the URL without credentials. */
function missing(what: string, shown: string): string {
  return `${what} (DATABASE_URL=${shown}, run in ${process.cwd()}). Run pet-service where the service runs, or set DATABASE_URL to its database; to start a new one, run \`pet-service migrate\` first.`
}
