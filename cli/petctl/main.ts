import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Command, CommanderError, Help } from 'commander'
import {
  DEFAULT_BASE_URL,
  type OrderUpdateParams,
  type PetService,
  PetService as PetServiceClient,
  PetServiceError,
  type PetServiceOptions,
  type RequestOptions,
  webhooks,
} from '../../clients/typescript/src/index.ts'
import { ORDER_COLUMNS, PET_COLUMNS, type Row, record, table, USER_COLUMNS } from './format.ts'
import { listen } from './listen.ts'

export const HELP = `petctl — the Pet Service from the command line (built on @pet-service/client)

Usage:
  petctl pets create --name NAME [--species S] [--breed B] [--owner-id USER_ID] [--status S]
  petctl pets get ID
  petctl pets update ID [--name N] [--species S] [--breed B] [--owner-id U] [--status S]
                        (PATCH /v1/pet/ID: only the fields given change; "" clears one)
  petctl pets update ID --v2 --name N [--photo-url URL]... [--status S] [--category NAME]
                        [--tag NAME]...   (PUT /v2/pet: full Petstore replace, OAuth token)
  petctl pets delete ID
  petctl pets list [--limit N] [--starting-after ID] [--status S] [--species S]
                   [--owner-id U] [--all]
  petctl users create --name NAME [--email E] [--phone P]
  petctl users get|delete ID
  petctl users update ID [--name N] [--email E] [--phone P]
  petctl users list [--limit N] [--starting-after ID] [--email E] [--all]
  petctl orders create --pet-id ID [--quantity N] [--ship-date DATE] [--status S] [--complete true|false]
  petctl orders get|delete ID
  petctl orders update ID [--pet-id ID] [--quantity N] [--ship-date DATE] [--status S]
                          [--complete true|false]   (--ship-date "" clears it)
  petctl orders list [--limit N] [--starting-after ID] [--status S] [--pet-id ID] [--all]
  petctl token [--scope "read:pets write:pets"]    print an OAuth access token
  petctl listen [--events TYPES] [--forward-to URL] [--secret whsec_...] [--last-event-id ID]
                print events as they happen (--json: one JSON event a line, the rest on
                stderr); with --forward-to, POST each to URL signed as a real webhook delivery
                (Standard Webhooks) and print the status it answered

  petctl COMMAND --help    a command's own options and examples (petctl pets create --help)

Connection (flags win over the environment):
  --url URL               PET_SERVICE_URL (default ${DEFAULT_BASE_URL})
  --api-key KEY           PET_SERVICE_API_KEY (v1 operations: every command but token and --v2)
  --client-id ID          PET_SERVICE_CLIENT_ID      OAuth client credentials: tokens are
  --client-secret SECRET  PET_SERVICE_CLIENT_SECRET  fetched for token and --v2
  --scope SCOPES          PET_SERVICE_SCOPE
  --access-token TOKEN    PET_SERVICE_ACCESS_TOKEN (instead of client credentials)
  --config PATH           PET_SERVICE_CONFIG (default ~/.config/petctl/config.json, if it
                          exists): a JSON object of the variables above, used for any not set

Output and requests:
  --json                  print the API's JSON instead of a table
  --timeout MS            per attempt (default 30000)
  --max-retries N         retries on network errors, 409 in progress, 429 and 5xx (default 2)

Exit status: 0 on success, 1 when the API or network refuses, 2 on a usage error (checked
before any request: a missing key, a malformed id or flag).
`

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Record<string, string | undefined>
  /** True when stderr is a terminal: --all shows its progress there. */
  progress: boolean
  /** Injected in tests; defaults to a client built from the flags and environment. */
  client?: (options: PetServiceOptions) => PetService
  /** Stops `petctl listen`; defaults to Ctrl-C (SIGINT) or SIGTERM. */
  signal?: AbortSignal
}

class UsageError extends Error {}

/** Every option a command may have: the global ones and its own (commander camel-cases them). */
interface Values {
  url?: string
  config?: string
  apiKey?: string
  clientId?: string
  clientSecret?: string
  scope?: string
  accessToken?: string
  json?: boolean
  all?: boolean
  timeout?: string
  maxRetries?: string
  idempotencyKey?: string
  ifMatch?: string
  name?: string
  species?: string
  breed?: string
  ownerId?: string
  status?: string
  email?: string
  phone?: string
  petId?: string
  quantity?: string
  shipDate?: string
  complete?: string
  limit?: string
  startingAfter?: string
  v2?: boolean
  photoUrl?: string[]
  tag?: string[]
  category?: string
  events?: string
  forwardTo?: string
  secret?: string
  lastEventId?: string
}

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** What an action needs: the parsed options, a client, and where to print. */
interface Run {
  values: Values
  io: Io
  json: boolean
  options: RequestOptions
  /** The client, once the credentials that `needs` names are known to be there. */
  client(needs: 'key' | 'oauth'): PetService
}

type Action = (run: Run, ...args: string[]) => Promise<void>

/** Runs petctl; answers the exit status. */
export async function run(argv: string[], io: Io): Promise<number> {
  const program = buildProgram(io)
  if (argv.length === 0) {
    io.out(HELP)
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
    throw error
  }
}

function buildProgram(io: Io): Command {
  const program = new Command('petctl')
    .description('the Pet Service from the command line')
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
    })
    .configureHelp({
      showGlobalOptions: true,
      // The overview above for petctl itself; commander's own for each command.
      formatHelp: (cmd, helper) =>
        cmd.parent === null ? HELP : Help.prototype.formatHelp.call(helper, cmd, helper),
    })
    .exitOverride()
    .showHelpAfterError('(petctl --help lists every command; add --help to a command for its options)')
    .option('--url <url>', 'PET_SERVICE_URL')
    .option('--config <path>', 'PET_SERVICE_CONFIG')
    .option('--api-key <key>', 'PET_SERVICE_API_KEY (v1 operations)')
    .option('--client-id <id>', 'PET_SERVICE_CLIENT_ID')
    .option('--client-secret <secret>', 'PET_SERVICE_CLIENT_SECRET')
    .option('--scope <scopes>', 'PET_SERVICE_SCOPE')
    .option('--access-token <token>', 'PET_SERVICE_ACCESS_TOKEN')
    .option('--json', "print the API's JSON instead of a table")
    .option('--timeout <ms>', 'per attempt (default 30000)')
    .option('--max-retries <n>', 'retries on network errors, 409 in progress, 429 and 5xx (default 2)')

  /** A leaf command whose action gets the merged options and a lazily checked client. */
  const leaf = (parent: Command, name: string, description: string, action: Action) =>
    parent
      .command(name)
      .description(description)
      .action(async (...args: unknown[]) => {
        const command = args.at(-1) as Command
        const values = command.optsWithGlobals<Values>()
        const positionals = args.slice(0, -2) as string[]
        await action(context(values, io, command), ...positionals)
      })

  const pets = program.command('pets').description('pets (v1, API key; update --v2: Petstore, OAuth)')
  leaf(pets, 'create', 'create a pet (POST /v1/pet)', petsCreate)
    .option('--name <name>', 'required')
    .option('--species <species>')
    .option('--breed <breed>')
    .option('--owner-id <user-id>', 'a user of your account (usr_…)')
    .option('--status <status>', 'available (default), pending or sold')
    .option('--idempotency-key <key>', 'one is generated otherwise')
    .addHelpText('after', '\nExample:\n  petctl pets create --name Rex --species dog --breed collie')
  leaf(pets, 'get', 'show a pet (GET /v1/pet/ID)', petsGet).argument('<id>', 'the pet id')
  leaf(pets, 'update', 'change a pet: some fields (PATCH /v1/pet/ID), or all of it with --v2', petsUpdate)
    .argument('<id>', 'the pet id')
    .option('--name <name>')
    .option('--species <species>', '"" clears it')
    .option('--breed <breed>', '"" clears it')
    .option('--owner-id <user-id>', '"" clears it')
    .option('--status <status>', 'available, pending or sold')
    .option('--if-match <etag>', 'refuse (412) if the pet changed since this ETag')
    .option('--v2', 'PUT /v2/pet: replace the whole pet (Petstore body, OAuth token)')
    .option('--photo-url <url>', 'with --v2; repeat for several', collect)
    .option('--tag <name>', 'with --v2; repeat for several', collect)
    .option('--category <name>', 'with --v2')
    .addHelpText(
      'after',
      "\nExamples:\n  petctl pets update 1 --status pending --breed ''\n  petctl pets update 1 --v2 --name Rex --photo-url https://example.com/rex.jpg --scope write:pets",
    )
  leaf(pets, 'delete', 'delete a pet (DELETE /v1/pet/ID)', petsDelete)
    .argument('<id>', 'the pet id')
    .option('--if-match <etag>', 'refuse (412) if the pet changed since this ETag')
  leaf(pets, 'list', 'list pets, newest first (GET /v1/pet)', petsList)
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--status <status>', 'available, pending or sold')
    .option('--species <species>')
    .option('--owner-id <user-id>')
    .option('--all', 'every page (a progress count on a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  petctl pets list --limit 20 --species dog\n  petctl pets list --all --json',
    )

  const users = program.command('users').description('users, the pet owners (v1, API key)')
  leaf(users, 'create', 'create a user (POST /v1/user)', usersCreate)
    .option('--name <name>', 'required')
    .option('--email <email>')
    .option('--phone <phone>')
    .option('--idempotency-key <key>', 'one is generated otherwise')
  leaf(users, 'get', 'show a user (GET /v1/user/ID)', usersGet).argument('<id>', 'the user id (usr_…)')
  leaf(users, 'update', 'change some fields of a user (PATCH /v1/user/ID)', usersUpdate)
    .argument('<id>', 'the user id (usr_…)')
    .option('--name <name>')
    .option('--email <email>', '"" clears it')
    .option('--phone <phone>', '"" clears it')
    .option('--if-match <etag>', 'refuse (412) if the user changed since this ETag')
  leaf(users, 'delete', 'delete a user (refused while pets name it as owner)', usersDelete)
    .argument('<id>', 'the user id (usr_…)')
    .option('--if-match <etag>', 'refuse (412) if the user changed since this ETag')
  leaf(users, 'list', 'list users, newest first (GET /v1/user)', usersList)
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--email <email>', 'only users with this email')
    .option('--all', 'every page (a progress count on a terminal)')

  const orders = program.command('orders').description('store orders for your pets (v1, API key)')
  leaf(orders, 'create', 'create an order (POST /v1/order)', ordersCreate)
    .option('--pet-id <id>', 'required: a pet of your account')
    .option('--quantity <n>', '1-10000 (default 1)')
    .option('--ship-date <date>', 'RFC 3339 with a time zone, e.g. 2026-12-24T18:00:00Z')
    .option('--status <status>', 'placed, approved or delivered (default placed)')
    .option('--complete <bool>', 'true or false (default false)')
    .option('--idempotency-key <key>', 'one is generated otherwise')
    .addHelpText(
      'after',
      '\nExample:\n  petctl orders create --pet-id 1 --quantity 2 --ship-date 2026-12-24T18:00:00Z',
    )
  leaf(orders, 'get', 'show an order (GET /v1/order/ID)', ordersGet).argument('<id>', 'the order id')
  leaf(orders, 'update', 'change some fields of an order (PATCH /v1/order/ID)', ordersUpdate)
    .argument('<id>', 'the order id')
    .option('--pet-id <id>', 'another pet of your account')
    .option('--quantity <n>')
    .option('--ship-date <date>', '"" clears it')
    .option('--status <status>', 'placed, approved or delivered')
    .option('--complete <bool>', 'true or false')
    .option('--if-match <etag>', 'refuse (412) if the order changed since this ETag')
  leaf(orders, 'delete', 'delete an order (DELETE /v1/order/ID)', ordersDelete)
    .argument('<id>', 'the order id')
    .option('--if-match <etag>', 'refuse (412) if the order changed since this ETag')
  leaf(orders, 'list', 'list orders, newest first (GET /v1/order)', ordersList)
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--status <status>', 'placed, approved or delivered')
    .option('--pet-id <id>', 'only the orders of this pet')
    .option('--all', 'every page (a progress count on a terminal)')

  leaf(
    program,
    'listen',
    'print events as they happen; forward them, signed, to a local server',
    listenCommand,
  )
    .option('--events <types>', 'comma-separated types or wildcards, e.g. pet.*,user.deleted (default all)')
    .option('--forward-to <url>', 'POST each event there, signed as a webhook delivery')
    .option('--secret <whsec>', 'sign with this secret (default: a new one each session)')
    .option('--last-event-id <id>', 'first replay the events after this one')
    .addHelpText(
      'after',
      '\nExamples:\n  petctl listen --events pet.*\n  petctl listen --forward-to http://localhost:3000/webhooks --secret whsec_...',
    )
  leaf(program, 'token', 'print an OAuth access token (client credentials grant)', token).addHelpText(
    'after',
    '\nExample:\n  PET_SERVICE_CLIENT_ID=pet_ci_... PET_SERVICE_CLIENT_SECRET=pet_cs_... petctl token --scope write:pets',
  )
  return program
}

function context(values: Values, io: Io, command: Command): Run {
  const options = clientOptions(values, io.env)
  const requestOptions: RequestOptions = {}
  if (values.idempotencyKey !== undefined) requestOptions.idempotencyKey = values.idempotencyKey
  if (values.ifMatch !== undefined) requestOptions.ifMatch = values.ifMatch
  const name = `petctl ${command.parent?.name() === 'petctl' ? '' : `${command.parent?.name()} `}${command.name()}`
  return {
    values,
    io,
    json: values.json === true,
    options: requestOptions,
    client(needs) {
      requireCredentials(options, needs, name)
      return (io.client ?? ((o) => new PetServiceClient(o)))(options)
    },
  }
}

/** Refuses, before any request, a command whose credentials are missing or of the wrong kind. */
function requireCredentials(options: PetServiceOptions, needs: 'key' | 'oauth', command: string): void {
  if (needs === 'key') {
    if (options.apiKey === undefined) {
      throw new UsageError(
        `${command} needs an API key: set PET_SERVICE_API_KEY or pass --api-key (pet-service keys create --account you@example.com, or the dashboard's API keys page, makes one).`,
      )
    }
    if (!options.apiKey.startsWith('pet_sk_')) {
      const what = options.apiKey.startsWith('eyJ')
        ? 'an OAuth access token (use it with --access-token, for token and --v2)'
        : options.apiKey.startsWith('pet_ci_')
          ? 'an OAuth client id (use it with --client-id)'
          : 'not an API key'
      throw new UsageError(`The API key given is ${what}; API keys start with pet_sk_.`)
    }
    return
  }
  if (options.accessToken === undefined && options.clientId === undefined) {
    throw new UsageError(
      `${command} needs OAuth credentials: PET_SERVICE_CLIENT_ID and PET_SERVICE_CLIENT_SECRET (pet-service clients create --account you@example.com, or the dashboard's OAuth apps page, makes them), or PET_SERVICE_ACCESS_TOKEN.`,
    )
  }
}

/** The problem detail, then what identifies it: code, parameter, status and request id. */
export function describeError(error: PetServiceError): string {
  const lines = [`Error: ${error.detail ?? error.message}`]
  const facts = [
    error.code === undefined ? undefined : `code ${error.code}`,
    error.param === undefined ? undefined : `param ${error.param}`,
    error.status === undefined ? undefined : `status ${error.status}`,
    error.requestId === undefined ? undefined : `request ${error.requestId}`,
  ].filter((f) => f !== undefined)
  if (facts.length > 0) lines.push(`  (${facts.join(', ')})`)
  for (const e of error.errors ?? []) lines.push(`  - ${e.message}`)
  if (error.type?.startsWith('/problems/')) lines.push(`  see ${error.type}`)
  return lines.join('\n')
}

/**
 * The optional config file: JSON with the same names as the environment variables, e.g.
 * `{"PET_SERVICE_URL": "https://pets.example.com", "PET_SERVICE_API_KEY": "pet_sk_..."}`.
 * `--config PATH`, else PET_SERVICE_CONFIG, else ~/.config/petctl/config.json if it exists.
 */
function readConfigFile(flag: string | undefined, env: Io['env']): Record<string, string | undefined> {
  const explicit = flag ?? env.PET_SERVICE_CONFIG
  const home = env.XDG_CONFIG_HOME ?? (env.HOME === undefined ? undefined : join(env.HOME, '.config'))
  const path = explicit ?? (home === undefined ? undefined : join(home, 'petctl', 'config.json'))
  if (path === undefined || (explicit === undefined && !existsSync(path))) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new UsageError(
      `Cannot read the config file ${path}: ${error instanceof Error ? error.message : error}`,
    )
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`The config file ${path} must hold a JSON object.`)
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') out[name] = value
  return out
}

function clientOptions(values: Values, env: Io['env']): PetServiceOptions {
  const file = readConfigFile(values.config, env)
  // A flag wins over the environment, which wins over the config file.
  const pick = (flag: string | undefined, name: string) => {
    const value = flag ?? env[name] ?? file[name]
    return value === undefined || value === '' ? undefined : value
  }
  const baseUrl = pick(values.url, 'PET_SERVICE_URL') ?? DEFAULT_BASE_URL
  if (!/^https?:\/\/[^/]/.test(baseUrl))
    throw new UsageError(`The service URL must start with http:// or https://, not ${baseUrl}.`)
  const options: PetServiceOptions = { baseUrl }
  const apiKey = pick(values.apiKey, 'PET_SERVICE_API_KEY')
  const clientId = pick(values.clientId, 'PET_SERVICE_CLIENT_ID')
  const clientSecret = pick(values.clientSecret, 'PET_SERVICE_CLIENT_SECRET')
  const accessToken = pick(values.accessToken, 'PET_SERVICE_ACCESS_TOKEN')
  const scope = pick(values.scope, 'PET_SERVICE_SCOPE')
  if (apiKey !== undefined) options.apiKey = apiKey
  if (accessToken !== undefined) options.accessToken = accessToken
  else if (clientId !== undefined || clientSecret !== undefined) {
    if (clientId === undefined || clientSecret === undefined)
      throw new UsageError('Give both --client-id and --client-secret (or their environment variables).')
    options.clientId = clientId
    options.clientSecret = clientSecret
  }
  if (scope !== undefined) options.scope = scope
  if (values.timeout !== undefined) options.timeout = integer(values.timeout, '--timeout', 1)
  if (values.maxRetries !== undefined) options.maxRetries = integer(values.maxRetries, '--max-retries', 0)
  return options
}

function integer(text: string, flag: string, min: number): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}.`)
  return n
}

function petId(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`A pet id is a positive whole number, not ${text}.`)
  return n
}

function orderId(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`An order id is a positive whole number, not ${text}.`)
  return n
}

function userId(text: string): string {
  if (!text.startsWith('usr_'))
    throw new UsageError(`A user id starts with usr_ (see petctl users list), not ${JSON.stringify(text)}.`)
  return text
}

/** Only the flags actually given, under their API names. */
function fields(values: Values, names: Partial<Record<keyof Values, string>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [flag, field] of Object.entries(names)) {
    const value = values[flag as keyof Values]
    if (typeof value === 'string' && field !== undefined) out[field] = value
  }
  return out
}

const PET_FIELDS = { name: 'name', species: 'species', breed: 'breed', ownerId: 'owner_id', status: 'status' }
const USER_FIELDS = { name: 'name', email: 'email', phone: 'phone' }
const PET_STATUSES = ['available', 'pending', 'sold'] as const
type PetStatus = (typeof PET_STATUSES)[number]

function status(text: string | undefined): PetStatus | undefined {
  if (text === undefined) return undefined
  if (!(PET_STATUSES as readonly string[]).includes(text))
    throw new UsageError(`--status must be one of ${PET_STATUSES.join(', ')}, not ${text}.`)
  return text as PetStatus
}

const show = (run: Run, object: object) =>
  run.io.out(run.json ? JSON.stringify(object, null, 2) : record(object as Row))

async function petsCreate(run: Run): Promise<void> {
  const { values } = run
  if (values.name === undefined) throw new UsageError('petctl pets create needs --name NAME.')
  status(values.status)
  const client = run.client('key')
  const body = { ...fields(values, PET_FIELDS), name: values.name }
  show(run, await client.pets.create(body as Parameters<typeof client.pets.create>[0], run.options))
}

async function petsGet(run: Run, id: string): Promise<void> {
  const pet = petId(id)
  show(run, await run.client('key').pets.get(pet, run.options))
}

async function petsUpdate(run: Run, id: string): Promise<void> {
  const { values } = run
  const pet = petId(id)
  status(values.status)
  if (values.v2 === true || values.photoUrl !== undefined || values.tag !== undefined) {
    if (values.name === undefined)
      throw new UsageError('--v2 replaces the whole pet: give --name (and --photo-url for each photo).')
    const replaced = await run.client('oauth').pets.update(
      {
        id: pet,
        name: values.name,
        photoUrls: values.photoUrl ?? [],
        ...(values.status === undefined ? {} : { status: status(values.status) }),
        ...(values.category === undefined ? {} : { category: { name: values.category } }),
        ...(values.tag === undefined ? {} : { tags: values.tag.map((name) => ({ name })) }),
        ...(values.species === undefined ? {} : { species: values.species }),
        ...(values.breed === undefined ? {} : { breed: values.breed }),
        ...(values.ownerId === undefined ? {} : { ownerId: values.ownerId }),
      },
      run.options,
    )
    show(run, replaced)
    return
  }
  const changes = fields(values, PET_FIELDS)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --name, --species, --breed, --owner-id or --status.')
  show(run, await run.client('key').pets.update(pet, changes, run.options))
}

async function petsDelete(run: Run, id: string): Promise<void> {
  const deleted = await run.client('key').pets.delete(petId(id), run.options)
  run.io.out(run.json ? JSON.stringify(deleted, null, 2) : `Deleted pet ${deleted.id}.`)
}

async function petsList(run: Run): Promise<void> {
  const { values } = run
  const params = {
    ...(values.limit === undefined ? {} : { limit: integer(values.limit, '--limit', 1) }),
    ...(values.startingAfter === undefined
      ? {}
      : { starting_after: integer(values.startingAfter, '--starting-after', 1) }),
    ...(values.status === undefined ? {} : { status: status(values.status) }),
    ...(values.species === undefined ? {} : { species: values.species }),
    ...(values.ownerId === undefined ? {} : { owner_id: values.ownerId }),
  }
  // --all walks every page: the largest page size makes that the fewest requests.
  const list = run
    .client('key')
    .pets.list({ ...(values.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(list, values.all === true, 'pets', PET_COLUMNS, run)
}

async function usersCreate(run: Run): Promise<void> {
  const { values } = run
  if (values.name === undefined) throw new UsageError('petctl users create needs --name NAME.')
  show(
    run,
    await run.client('key').users.create({ ...fields(values, USER_FIELDS), name: values.name }, run.options),
  )
}

async function usersGet(run: Run, id: string): Promise<void> {
  show(run, await run.client('key').users.get(userId(id), run.options))
}

async function usersUpdate(run: Run, id: string): Promise<void> {
  const user = userId(id)
  const changes = fields(run.values, USER_FIELDS)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --name, --email or --phone.')
  show(run, await run.client('key').users.update(user, changes, run.options))
}

async function usersDelete(run: Run, id: string): Promise<void> {
  const deleted = await run.client('key').users.delete(userId(id), run.options)
  run.io.out(run.json ? JSON.stringify(deleted, null, 2) : `Deleted user ${deleted.id}.`)
}

async function usersList(run: Run): Promise<void> {
  const { values } = run
  const params = {
    ...(values.limit === undefined ? {} : { limit: integer(values.limit, '--limit', 1) }),
    ...(values.startingAfter === undefined ? {} : { starting_after: userId(values.startingAfter) }),
    ...(values.email === undefined ? {} : { email: values.email }),
  }
  const list = run
    .client('key')
    .users.list({ ...(values.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(list, values.all === true, 'users', USER_COLUMNS, run)
}

const ORDER_STATUSES = ['placed', 'approved', 'delivered'] as const

/** The order fields among the flags given, typed as the API takes them (checked before any request). */
function orderFields(values: Values): OrderUpdateParams {
  const out: OrderUpdateParams = {}
  if (values.petId !== undefined) out.pet_id = petId(values.petId)
  if (values.quantity !== undefined) out.quantity = integer(values.quantity, '--quantity', 1)
  if (values.shipDate !== undefined) out.ship_date = values.shipDate === '' ? null : values.shipDate
  if (values.status !== undefined) {
    if (!(ORDER_STATUSES as readonly string[]).includes(values.status))
      throw new UsageError(`--status must be one of ${ORDER_STATUSES.join(', ')}, not ${values.status}.`)
    out.status = values.status as (typeof ORDER_STATUSES)[number]
  }
  if (values.complete !== undefined) {
    if (values.complete !== 'true' && values.complete !== 'false')
      throw new UsageError(`--complete must be true or false, not ${values.complete}.`)
    out.complete = values.complete === 'true'
  }
  return out
}

async function ordersCreate(run: Run): Promise<void> {
  const { pet_id, ...rest } = orderFields(run.values)
  if (pet_id === undefined) throw new UsageError('petctl orders create needs --pet-id ID.')
  show(run, await run.client('key').orders.create({ ...rest, pet_id }, run.options))
}

async function ordersGet(run: Run, id: string): Promise<void> {
  show(run, await run.client('key').orders.get(orderId(id), run.options))
}

async function ordersUpdate(run: Run, id: string): Promise<void> {
  const order = orderId(id)
  const changes = orderFields(run.values)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --pet-id, --quantity, --ship-date, --status or --complete.')
  show(run, await run.client('key').orders.update(order, changes, run.options))
}

async function ordersDelete(run: Run, id: string): Promise<void> {
  const deleted = await run.client('key').orders.delete(orderId(id), run.options)
  run.io.out(run.json ? JSON.stringify(deleted, null, 2) : `Deleted order ${deleted.id}.`)
}

async function ordersList(run: Run): Promise<void> {
  const { values } = run
  const { pet_id, status: orderStatus } = orderFields({
    ...(values.petId === undefined ? {} : { petId: values.petId }),
    ...(values.status === undefined ? {} : { status: values.status }),
  })
  const params = {
    ...(values.limit === undefined ? {} : { limit: integer(values.limit, '--limit', 1) }),
    ...(values.startingAfter === undefined ? {} : { starting_after: orderId(values.startingAfter) }),
    ...(orderStatus === undefined ? {} : { status: orderStatus }),
    ...(pet_id === undefined ? {} : { pet_id }),
  }
  const list = run
    .client('key')
    .orders.list({ ...(values.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(list, values.all === true, 'orders', ORDER_COLUMNS, run)
}

async function listenCommand(run: Run): Promise<void> {
  const { values, io } = run
  const events = values.events
    ?.split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
  let forwardTo: URL | undefined
  if (values.forwardTo !== undefined) {
    forwardTo = URL.canParse(values.forwardTo) ? new URL(values.forwardTo) : undefined
    if (forwardTo === undefined || !/^https?:$/.test(forwardTo.protocol))
      throw new UsageError(`--forward-to must be an http:// or https:// URL, not ${values.forwardTo}.`)
  }
  const secret = values.secret ?? webhooks.generateSecret()
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret))
    throw new UsageError('--secret must be whsec_ followed by base64, as petctl listen prints it.')
  if (values.lastEventId !== undefined && !values.lastEventId.startsWith('evt_'))
    throw new UsageError(`--last-event-id takes an event id (evt_…), not ${values.lastEventId}.`)
  const client = run.client('key')
  // Ctrl-C ends the listening, not the process mid-forward: the loop finishes and petctl exits 0.
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  if (io.signal === undefined) {
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
  }
  try {
    await listen(
      client,
      {
        events: events === undefined || events.length === 0 ? undefined : events,
        forwardTo,
        secret,
        json: run.json,
        lastEventId: values.lastEventId,
      },
      { out: io.out, err: io.err, signal: io.signal ?? stop.signal },
    )
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

async function token(run: Run): Promise<void> {
  const issued = await run.client('oauth').oauth.token(run.options)
  run.io.out(run.json ? JSON.stringify(issued, null, 2) : issued.access_token)
}

/** One page (as the API answered it), or with --all every item of every page. */
async function printList<T extends object>(
  list: AsyncIterable<T> & PromiseLike<{ data: T[]; has_more: boolean }>,
  all: boolean,
  noun: string,
  columns: string[],
  { io, json }: Run,
): Promise<void> {
  if (!all) {
    const page = await list
    if (json) io.out(JSON.stringify(page, null, 2))
    else {
      io.out(page.data.length === 0 ? `No ${noun}.` : table(page.data as Row[], columns))
      if (page.has_more) io.out(`(more: --starting-after ${String((page.data.at(-1) as Row).id)}, or --all)`)
    }
    return
  }
  const items: T[] = []
  for await (const item of list) {
    items.push(item)
    if (io.progress && items.length % 50 === 0) io.err(`\rFetched ${items.length} ${noun}…`)
  }
  if (io.progress) io.err(`\rFetched ${items.length} ${noun}.  \n`)
  if (json) io.out(JSON.stringify(items, null, 2))
  else io.out(items.length === 0 ? `No ${noun}.` : table(items as Row[], columns))
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
