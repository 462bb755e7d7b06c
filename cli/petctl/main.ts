/**
 * petctl, the Pet Service from the command line: the program, its global options and its
 * command modules (commands/), one per resource. A new command group is one module there and
 * one line in COMMANDS.
 */
import { Command, CommanderError } from 'commander'
import { DEFAULT_BASE_URL, PetServiceError } from '../../clients/typescript/src/index.ts'
import type { Io, Register } from './command.ts'
import { registerEvents } from './commands/events.ts'
import { registerListen } from './commands/listen.ts'
import { registerLogs } from './commands/logs.ts'
import { registerOrders } from './commands/orders.ts'
import { registerPets } from './commands/pets.ts'
import { registerToken } from './commands/token.ts'
import { registerTrigger } from './commands/trigger.ts'
import { registerUsers } from './commands/users.ts'
import { registerWebhooks } from './commands/webhooks.ts'
import { registerWhoami } from './commands/whoami.ts'
import { CommandFailure, describeError, UsageError } from './errors.ts'

export type { Io } from './command.ts'

/** In the order `petctl --help` lists them. */
const COMMANDS: readonly Register[] = [
  registerPets,
  registerUsers,
  registerOrders,
  registerEvents,
  registerWebhooks,
  registerLogs,
  registerListen,
  registerTrigger,
  registerToken,
  registerWhoami,
]

const ROOT_NOTES = `
A flag wins over the environment variable named beside it, which wins over the
config file.

Exit status: 0 on success, 1 when the API or the network refuses, 2 on a usage
error (found before any request: a missing key, a malformed id or flag).

Examples:
  export PET_SERVICE_URL=http://localhost:8080 PET_SERVICE_API_KEY=pet_sk_...
  petctl pets create --name NAME --species dog
  petctl pets list --all --json
  petctl pets create --help`

/** Runs petctl; answers the exit status. */
export async function run(argv: string[], io: Io): Promise<number> {
  const program = buildProgram(io)
  if (argv.length === 0) {
    program.outputHelp()
    return 0
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander printed the message, with a suggestion for a typo.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2
    }
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\nRun petctl --help for usage.`)
      return 2
    }
    if (error instanceof PetServiceError) {
      io.err(describeError(error))
      return 1
    }
    if (error instanceof CommandFailure) {
      io.err(`Error: ${error.message}`)
      return 1
    }
    throw error
  }
}

/** What `petctl --help` prints. */
export function help(): string {
  let text = ''
  const io: Io = { out: (t) => (text += `${t}\n`), err: () => {}, env: {}, progress: false }
  buildProgram(io).outputHelp()
  return text
}

function buildProgram(io: Io): Command {
  const program = new Command('petctl')
    .description('the Pet Service from the command line (built on @pet-service/client)')
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
    })
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .showHelpAfterError('(petctl --help lists every command; add --help to a command for its options)')
    .option('--url <url>', `the service: PET_SERVICE_URL (default ${DEFAULT_BASE_URL})`)
    .option(
      '--config <path>',
      'PET_SERVICE_CONFIG: a JSON object of these variables (default ~/.config/petctl/config.json)',
    )
    .option('--api-key <key>', 'PET_SERVICE_API_KEY, for every command but token and pets update --v2')
    .option('--client-id <id>', 'PET_SERVICE_CLIENT_ID: OAuth client credentials, for token and --v2')
    .option('--client-secret <secret>', 'PET_SERVICE_CLIENT_SECRET')
    .option('--scope <scopes>', 'PET_SERVICE_SCOPE: the scopes a token asks for')
    .option(
      '--access-token <token>',
      'PET_SERVICE_ACCESS_TOKEN: a ready token, instead of client credentials',
    )
    .option('--json', "print the API's JSON instead of a table")
    .option('--timeout <ms>', 'per attempt (default 30000)')
    .option('--max-retries <n>', 'retries on network errors, 409 in progress, 429 and 5xx (default 2)')
    .addHelpText('after', ROOT_NOTES)
  for (const register of COMMANDS) register(program, io)
  return program
}

/** The process entry (bin/petctl.js). */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await run(argv, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(text.startsWith('\r') ? text : `${text}\n`),
    env: process.env,
    progress: process.stderr.isTTY === true,
  })
}
