import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  DEFAULT_BASE_URL,
  type PetService,
  PetService as PetServiceClient,
  PetServiceError,
  type PetServiceOptions,
  type RequestOptions,
} from '../../clients/typescript/src/index.ts'
import { PET_COLUMNS, type Row, record, table, USER_COLUMNS } from './format.ts'

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
  petctl token [--scope "read:pets write:pets"]    print an OAuth access token

Connection (flags win over the environment):
  --url URL               PET_SERVICE_URL (default ${DEFAULT_BASE_URL})
  --api-key KEY           PET_SERVICE_API_KEY (v1 operations)
  --client-id ID          PET_SERVICE_CLIENT_ID      OAuth client credentials: tokens are
  --client-secret SECRET  PET_SERVICE_CLIENT_SECRET  fetched for token and --v2
  --scope SCOPES          PET_SERVICE_SCOPE
  --access-token TOKEN    PET_SERVICE_ACCESS_TOKEN (instead of client credentials)
  --config PATH           PET_SERVICE_CONFIG (default ~/.config/petctl/config.json, if it
                          exists): a JSON object of the variables above, used for any not set

Output and requests:
  --json                  print the API's JSON instead of a table
  --all                   list every page (a progress count on a terminal)
  --timeout MS            per attempt (default 30000)
  --max-retries N         retries on network errors, 409 in progress, 429 and 5xx (default 2)
  --idempotency-key KEY   for create (one is generated otherwise)
  --if-match ETAG         for update and delete: refuse (412) if the object changed

Exit status: 0 on success, 1 when the API or network refuses, 2 on a usage error.
`

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Record<string, string | undefined>
  /** True when stderr is a terminal: --all shows its progress there. */
  progress: boolean
  /** Injected in tests; defaults to a client built from the flags and environment. */
  client?: (options: PetServiceOptions) => PetService
}

class UsageError extends Error {}

const OPTIONS = {
  url: { type: 'string' },
  config: { type: 'string' },
  'api-key': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  scope: { type: 'string' },
  'access-token': { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  timeout: { type: 'string' },
  'max-retries': { type: 'string' },
  'idempotency-key': { type: 'string' },
  'if-match': { type: 'string' },
  name: { type: 'string' },
  species: { type: 'string' },
  breed: { type: 'string' },
  'owner-id': { type: 'string' },
  status: { type: 'string' },
  email: { type: 'string' },
  phone: { type: 'string' },
  limit: { type: 'string' },
  'starting-after': { type: 'string' },
  v2: { type: 'boolean' },
  'photo-url': { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  category: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

type Values = ReturnType<typeof parse>['values']

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
}

/** Runs petctl; answers the exit status. */
export async function run(argv: string[], io: Io): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\nRun petctl --help for usage.`)
    return 2
  }
  const { values, positionals } = parsed
  const [resource, action, id, ...extra] = positionals
  if (values.help === true || resource === undefined || resource === 'help') {
    io.out(HELP)
    return 0
  }
  try {
    if (extra.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0])}.`)
    const client = (io.client ?? ((o) => new PetServiceClient(o)))(clientOptions(values, io.env))
    const options = requestOptions(values)
    const json = values.json === true
    switch (resource) {
      case 'pets':
        return await pets(client, action, id, values, options, io, json)
      case 'users':
        return await users(client, action, id, values, options, io, json)
      case 'token': {
        if (action !== undefined) throw new UsageError('Usage: petctl token [--scope SCOPES] [--json]')
        const token = await client.oauth.token(options)
        io.out(json ? JSON.stringify(token, null, 2) : token.access_token)
        return 0
      }
      default:
        throw new UsageError(`Unknown command ${JSON.stringify(resource)}.`)
    }
  } catch (error) {
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
  const options: PetServiceOptions = { baseUrl: pick(values.url, 'PET_SERVICE_URL') ?? DEFAULT_BASE_URL }
  const apiKey = pick(values['api-key'], 'PET_SERVICE_API_KEY')
  const clientId = pick(values['client-id'], 'PET_SERVICE_CLIENT_ID')
  const clientSecret = pick(values['client-secret'], 'PET_SERVICE_CLIENT_SECRET')
  const accessToken = pick(values['access-token'], 'PET_SERVICE_ACCESS_TOKEN')
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
  if (values['max-retries'] !== undefined)
    options.maxRetries = integer(values['max-retries'], '--max-retries', 0)
  return options
}

function requestOptions(values: Values): RequestOptions {
  const options: RequestOptions = {}
  if (values['idempotency-key'] !== undefined) options.idempotencyKey = values['idempotency-key']
  if (values['if-match'] !== undefined) options.ifMatch = values['if-match']
  return options
}

function integer(text: string, flag: string, min: number): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}.`)
  return n
}

function requireId(id: string | undefined, usage: string): string {
  if (id === undefined || id === '') throw new UsageError(`Usage: ${usage}`)
  return id
}

function petId(id: string | undefined, usage: string): number {
  const text = requireId(id, usage)
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`A pet id is a positive whole number, not ${text}.`)
  return n
}

/** Only the flags actually given, under their API names. */
function fields(values: Values, names: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [flag, field] of Object.entries(names)) {
    const value = (values as Record<string, unknown>)[flag]
    if (typeof value === 'string') out[field] = value
  }
  return out
}

const PET_FIELDS = {
  name: 'name',
  species: 'species',
  breed: 'breed',
  'owner-id': 'owner_id',
  status: 'status',
}
const USER_FIELDS = { name: 'name', email: 'email', phone: 'phone' }
const PET_STATUSES = ['available', 'pending', 'sold'] as const
type PetStatus = (typeof PET_STATUSES)[number]

function status(text: string | undefined): PetStatus | undefined {
  if (text === undefined) return undefined
  if (!(PET_STATUSES as readonly string[]).includes(text))
    throw new UsageError(`--status must be one of ${PET_STATUSES.join(', ')}.`)
  return text as PetStatus
}

async function pets(
  client: PetService,
  action: string | undefined,
  id: string | undefined,
  values: Values,
  options: RequestOptions,
  io: Io,
  json: boolean,
): Promise<number> {
  const show = (pet: object) => io.out(json ? JSON.stringify(pet, null, 2) : record(pet as Row))
  switch (action) {
    case 'create': {
      if (id !== undefined) throw new UsageError('pets create takes no id; the service assigns one.')
      if (values.name === undefined) throw new UsageError('Usage: petctl pets create --name NAME [...]')
      status(values.status)
      const pet = await client.pets.create(
        { ...fields(values, PET_FIELDS), name: values.name } as Parameters<typeof client.pets.create>[0],
        options,
      )
      show(pet)
      return 0
    }
    case 'get':
      show(await client.pets.get(petId(id, 'petctl pets get ID'), options))
      return 0
    case 'update': {
      const petIdValue = petId(id, 'petctl pets update ID [--name N] ...')
      status(values.status)
      if (values.v2 === true || values['photo-url'] !== undefined || values.tag !== undefined) {
        if (values.name === undefined)
          throw new UsageError('--v2 replaces the whole pet: give --name (and --photo-url for each photo).')
        const pet = await client.pets.update(
          {
            id: petIdValue,
            name: values.name,
            photoUrls: values['photo-url'] ?? [],
            ...(values.status === undefined ? {} : { status: status(values.status) }),
            ...(values.category === undefined ? {} : { category: { name: values.category } }),
            ...(values.tag === undefined ? {} : { tags: values.tag.map((name) => ({ name })) }),
            ...(values.species === undefined ? {} : { species: values.species }),
            ...(values.breed === undefined ? {} : { breed: values.breed }),
            ...(values['owner-id'] === undefined ? {} : { ownerId: values['owner-id'] }),
          },
          options,
        )
        show(pet)
        return 0
      }
      const changes = fields(values, PET_FIELDS)
      if (Object.keys(changes).length === 0)
        throw new UsageError('Nothing to change: give --name, --species, --breed, --owner-id or --status.')
      show(await client.pets.update(petIdValue, changes, options))
      return 0
    }
    case 'delete': {
      const deleted = await client.pets.delete(petId(id, 'petctl pets delete ID'), options)
      io.out(json ? JSON.stringify(deleted, null, 2) : `Deleted pet ${deleted.id}.`)
      return 0
    }
    case 'list': {
      if (id !== undefined) throw new UsageError('pets list takes no id; use --starting-after.')
      const params = {
        ...(values.limit === undefined ? {} : { limit: integer(values.limit, '--limit', 1) }),
        ...(values['starting-after'] === undefined
          ? {}
          : { starting_after: integer(values['starting-after'], '--starting-after', 1) }),
        ...(values.status === undefined ? {} : { status: status(values.status) }),
        ...(values.species === undefined ? {} : { species: values.species }),
        ...(values['owner-id'] === undefined ? {} : { owner_id: values['owner-id'] }),
      }
      // --all walks every page: the largest page size makes that the fewest requests.
      const list = client.pets.list({ ...(values.all === true ? { limit: 100 } : {}), ...params }, options)
      return await printList(list, values.all === true, 'pets', PET_COLUMNS, io, json)
    }
    default:
      throw new UsageError('Usage: petctl pets create|get|update|delete|list ...')
  }
}

async function users(
  client: PetService,
  action: string | undefined,
  id: string | undefined,
  values: Values,
  options: RequestOptions,
  io: Io,
  json: boolean,
): Promise<number> {
  const show = (user: object) => io.out(json ? JSON.stringify(user, null, 2) : record(user as Row))
  switch (action) {
    case 'create': {
      if (id !== undefined) throw new UsageError('users create takes no id; the service assigns one.')
      if (values.name === undefined) throw new UsageError('Usage: petctl users create --name NAME [...]')
      show(await client.users.create({ ...fields(values, USER_FIELDS), name: values.name }, options))
      return 0
    }
    case 'get':
      show(await client.users.get(requireId(id, 'petctl users get ID'), options))
      return 0
    case 'update': {
      const userId = requireId(id, 'petctl users update ID [--name N] [--email E] [--phone P]')
      const changes = fields(values, USER_FIELDS)
      if (Object.keys(changes).length === 0)
        throw new UsageError('Nothing to change: give --name, --email or --phone.')
      show(await client.users.update(userId, changes, options))
      return 0
    }
    case 'delete': {
      const deleted = await client.users.delete(requireId(id, 'petctl users delete ID'), options)
      io.out(json ? JSON.stringify(deleted, null, 2) : `Deleted user ${deleted.id}.`)
      return 0
    }
    case 'list': {
      if (id !== undefined) throw new UsageError('users list takes no id; use --starting-after.')
      const params = {
        ...(values.limit === undefined ? {} : { limit: integer(values.limit, '--limit', 1) }),
        ...(values['starting-after'] === undefined ? {} : { starting_after: values['starting-after'] }),
        ...(values.email === undefined ? {} : { email: values.email }),
      }
      const list = client.users.list({ ...(values.all === true ? { limit: 100 } : {}), ...params }, options)
      return await printList(list, values.all === true, 'users', USER_COLUMNS, io, json)
    }
    default:
      throw new UsageError('Usage: petctl users create|get|update|delete|list ...')
  }
}

/** One page (as the API answered it), or with --all every item of every page. */
async function printList<T extends object>(
  list: AsyncIterable<T> & PromiseLike<{ data: T[]; has_more: boolean }>,
  all: boolean,
  noun: string,
  columns: string[],
  io: Io,
  json: boolean,
): Promise<number> {
  if (!all) {
    const page = await list
    if (json) io.out(JSON.stringify(page, null, 2))
    else {
      io.out(page.data.length === 0 ? `No ${noun}.` : table(page.data as Row[], columns))
      if (page.has_more) io.out(`(more: --starting-after ${String((page.data.at(-1) as Row).id)}, or --all)`)
    }
    return 0
  }
  const items: T[] = []
  for await (const item of list) {
    items.push(item)
    if (io.progress && items.length % 50 === 0) io.err(`\rFetched ${items.length} ${noun}…`)
  }
  if (io.progress) io.err(`\rFetched ${items.length} ${noun}.  \n`)
  if (json) io.out(JSON.stringify(items, null, 2))
  else io.out(items.length === 0 ? `No ${noun}.` : table(items as Row[], columns))
  return 0
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
