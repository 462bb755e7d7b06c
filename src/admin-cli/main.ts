import { existsSync } from 'node:fs'
import { Command, CommanderError } from 'commander'
import packageJson from '../../package.json' with { type: 'json' }
import {
  type Config,
  ConfigError,
  loadConfig,
  workers as parseWorkers,
  sqlitePath,
} from '../config/config.ts'
import type { DatabaseHandle } from '../db/database.ts'
import type { Db } from '../db/schema.ts'
import { addAccountsCommands } from './accounts-command.ts'
import { openForCommand } from './cli-database.ts'
import { type CliIo, processIo, UsageError } from './cli-io.ts'
import { addClientsCommands } from './clients-command.ts'
import { addKeysCommands } from './keys-command.ts'
import { serviceUrl } from './service-url.ts'
import { addWebhooksCommands } from './webhooks-command.ts'

const FOOTER = `
Every command uses DATABASE_URL (default sqlite:./data/pet-service.db, relative to the current
folder), like the server, and says on stderr which database it used. Only serve and migrate
create a database that does not exist yet.

Run pet-service COMMAND --help for a command's options.`

/** The admin CLI's commands (commander: per-command help, suggestions for typos). */
function program(io: CliIo, state: { running: boolean }): Command {
  let config: Config | undefined
  const configOf = () => {
    config ??= loadConfig()
    return config
  }
  const withDatabase = async (mayCreate: boolean, work: (database: DatabaseHandle) => Promise<void>) => {
    const database = await openForCommand(configOf(), io, { mayCreate })
    try {
      await work(database)
    } finally {
      await database.close()
    }
  }
  const withDb = (work: (db: Db) => Promise<void>) => withDatabase(false, (database) => work(database.db))
  const baseUrl = () => serviceUrl(configOf())

  const cli = new Command('pet-service')
    .description('run and administer the Pet Service')
    .version(packageJson.version)
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
    })
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', FOOTER)

  cli
    .command('serve')
    .description('start the HTTP API (migrates the database first, creating it if needed)')
    .option(
      '--workers <n>',
      'processes serving the one port: a number, or auto for one per core (default: WORKERS, or 1)',
    )
    .action(async (options: { workers?: string }) => {
      const config = configOf()
      // Loaded only here: the admin commands stay quick to start without the whole HTTP stack.
      const workers = await import('./workers.ts')
      if (workers.isClusterWorker()) {
        await workers.startWorker(config)
        state.running = true
        return
      }
      const problems: string[] = []
      const count = workers.workerCount(
        options.workers === undefined ? config.workers : parseWorkers(options.workers, problems, '--workers'),
      )
      if (problems.length > 0) throw new ConfigError(problems)
      io.err(`database: ${describeDatabase(config)}`)
      if (count === 1) {
        const { startServer } = await import('../server.ts')
        await startServer(config)
      } else {
        await workers.runPrimary(config, count)
      }
      state.running = true
    })
  cli
    .command('migrate')
    .description('create the database if needed, apply migrations and exit')
    .action(() =>
      withDatabase(true, async (database) => {
        io.out(`Database ${database.location} is up to date.`)
      }),
    )
  addAccountsCommands(cli, io, withDb)
  addKeysCommands(cli, io, withDb, baseUrl)
  addClientsCommands(cli, io, withDb, baseUrl)
  addWebhooksCommands(cli, io, withDb, configOf)
  cli
    .command('backup')
    .description('a consistent online copy of the SQLite database (PostgreSQL: use pg_dump)')
    .argument('<path>', 'the file to write')
    .addHelpText('after', '\nExample:\n  pet-service backup backups/pets-$(date +%F).db')
    .action((path: string) =>
      withDatabase(false, async (database) => {
        if (database.sqlite === undefined) {
          throw new UsageError(
            'backup copies SQLite databases; for PostgreSQL use pg_dump (see docs/operations.md, Backups).',
          )
        }
        // SQLite's online backup API: a consistent copy while the server keeps serving.
        await database.sqlite.backup(path)
        io.out(`Backed up ${database.location} to ${path}.`)
      }),
    )
  return cli
}

/** Where the service's data lives, without credentials, and whether it is new. */
function describeDatabase(config: Config): string {
  const url = config.databaseUrl
  if (url.startsWith('sqlite:')) {
    const file = sqlitePath(url)
    return `sqlite:${file}${file !== ':memory:' && !existsSync(file) ? ' (created now)' : ''}`
  }
  const shown = new URL(url)
  shown.username = ''
  shown.password = ''
  return shown.toString()
}

/**
 * Runs `pet-service ARGV`; answers the exit status (0 ok, 1 failed, 2 bad command line or
 * configuration), or -1 when the server keeps running.
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const state = { running: false }
  const cli = program(io, state)
  if (argv.length === 0) {
    cli.outputHelp()
    return 0
  }
  try {
    await cli.parseAsync(argv, { from: 'user' })
    return state.running ? -1 : 0
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (and a suggestion for a typo) already.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2
    }
    if (error instanceof ConfigError || error instanceof UsageError) {
      io.err(error.message)
      return 2
    }
    io.err(error instanceof Error ? error.message : String(error))
    return 1
  }
}

export async function main(argv: string[]): Promise<void> {
  const code = await runCli(argv)
  if (code >= 0) process.exitCode = code
}
