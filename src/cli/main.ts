import { parseArgs } from 'node:util'
import {
  findAccountByEmail,
  findOrCreateAccount,
  insertAccount,
  isEmail,
} from '../accounts/accounts-repository.ts'
import { parseScopes } from '../auth/scopes.ts'
import { ConfigError, loadConfig } from '../config/config.ts'
import { databaseTimeouts, openDatabase } from '../db/database.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { findApiKeyById, listApiKeys } from '../keys/keys-repository.ts'
import { createApiKey, KeyAuthenticator, toApiKeyInfo } from '../keys/keys-service.ts'
import { ClientsUsageError, runClientsCommand } from './clients-command.ts'

const HELP = `pet-service — run and administer the Pet Service

Usage:
  pet-service serve                         start the HTTP API (migrates first)
  pet-service migrate                       apply database migrations and exit
  pet-service accounts create --email E     create an account
  pet-service keys create --account EMAIL [--name LABEL] [--scope "read:pets ..."]
                          [--expires-in-days N] [--json]
                                            create an API key (and the account if needed)
  pet-service keys list --account EMAIL [--json]
  pet-service keys revoke KEY_ID
  pet-service clients create --account EMAIL [--scope "read:pets write:pets"] [--name N]
                             [--redirect-uri URI]... [--json]
                                            create an OAuth client (and the account if needed)
  pet-service clients list [--account EMAIL] [--json]
  pet-service clients delete CLIENT_ID     delete a client; its tokens stop working
  pet-service backup PATH                   consistent online copy of the SQLite database

Every command uses DATABASE_URL (default sqlite:./data/pet-service.db), like the server.
`

class UsageError extends Error {}

type Out = (line: string) => void

export async function runCli(argv: string[], out: Out = console.log): Promise<number> {
  const [command, sub, ...rest] = argv
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    out(HELP)
    return 0
  }
  const config = loadConfig()
  if (command === 'serve') {
    // Loaded only here: the admin commands stay quick to start without the whole HTTP stack.
    const { startServer } = await import('../server.ts')
    await startServer(config)
    return -1 // keep running
  }

  // An admin command is not a request: its statements (a migration, say) may run as long as they need.
  const database = openDatabase(config.databaseUrl, {
    timeouts: { ...databaseTimeouts(config), statementMs: 0 },
  })
  try {
    await migrateToLatest(database.db)
    const db = database.db
    if (command === 'backup') {
      if (sub === undefined) throw new UsageError('Usage: pet-service backup PATH')
      if (database.sqlite === undefined) {
        throw new UsageError(
          'backup copies SQLite databases; for PostgreSQL use pg_dump (see README, Operations).',
        )
      }
      // SQLite's online backup API: a consistent copy while the server keeps serving.
      await database.sqlite.backup(sub)
      out(`Backed up ${database.location} to ${sub}.`)
      return 0
    }
    switch (`${command} ${sub ?? ''}`.trim()) {
      case 'migrate':
        out(`Database ${database.location} is up to date.`)
        return 0
      case 'accounts create': {
        const { values } = parseArgs({
          args: rest,
          options: { email: { type: 'string' }, json: { type: 'boolean' } },
        })
        const email = requireEmail(values.email, '--email')
        if ((await findAccountByEmail(db, email)) !== undefined)
          throw new UsageError(`An account for ${email} already exists.`)
        const account = await insertAccount(db, { email })
        out(
          values.json
            ? JSON.stringify({ account_id: account.id, email: account.email })
            : `Created account ${account.id} for ${account.email}.`,
        )
        return 0
      }
      case 'keys create': {
        const { values } = parseArgs({
          args: rest,
          options: {
            account: { type: 'string' },
            name: { type: 'string' },
            scope: { type: 'string' },
            'expires-in-days': { type: 'string' },
            json: { type: 'boolean' },
          },
        })
        const email = requireEmail(values.account, '--account')
        let scopes = null
        if (values.scope !== undefined) {
          const parsed = parseScopes(values.scope)
          if (parsed.unknown.length > 0)
            throw new UsageError(`Unknown scope(s): ${parsed.unknown.join(', ')}.`)
          scopes = parsed.scopes
        }
        let expiresAt = null
        if (values['expires-in-days'] !== undefined) {
          const days = Number(values['expires-in-days'])
          if (!(days > 0 && days <= 3650))
            throw new UsageError('--expires-in-days must be a number of days from 1 to 3650.')
          expiresAt = new Date(Date.now() + days * 86_400_000)
        }
        const { account } = await findOrCreateAccount(db, email)
        const { apiKey, info } = await createApiKey(db, {
          accountId: account.id,
          ...(values.name === undefined ? {} : { name: values.name }),
          scopes,
          expiresAt,
        })
        if (values.json) {
          out(
            JSON.stringify({
              api_key: apiKey,
              key_id: info.id,
              account_id: account.id,
              email: account.email,
              name: info.name,
              scopes: info.scopes,
              expires_at: info.expires_at,
            }),
          )
        } else {
          out(
            `API key for ${account.email} (${account.id}), shown only this once:\n\n  ${apiKey}\n\nKey id: ${info.id}. Try it: curl -u ${apiKey}: -d name=Rex http://localhost:${config.port}/v1/pet`,
          )
        }
        return 0
      }
      case 'keys list': {
        const { values } = parseArgs({
          args: rest,
          options: { account: { type: 'string' }, json: { type: 'boolean' } },
        })
        const email = requireEmail(values.account, '--account')
        const account = await findAccountByEmail(db, email)
        if (account === undefined) throw new UsageError(`No account for ${email}.`)
        const keys = (await listApiKeys(db, account.id)).map(toApiKeyInfo)
        if (values.json) out(JSON.stringify(keys))
        else if (keys.length === 0) out(`No API keys for ${email}.`)
        else {
          for (const k of keys) {
            const state = k.revoked_at
              ? `revoked ${k.revoked_at}`
              : k.expires_at
                ? `expires ${k.expires_at}`
                : 'active'
            out(
              `${k.id}  ${k.redacted}  ${k.name}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}  ${state}`,
            )
          }
        }
        return 0
      }
      case 'keys revoke': {
        const id = rest[0]
        if (id === undefined) throw new UsageError('Usage: pet-service keys revoke KEY_ID (see keys list).')
        const existing = await findApiKeyById(db, id)
        if (existing === undefined) throw new UsageError(`No API key with id ${id}.`)
        const revoked = await new KeyAuthenticator(db, { cacheMs: 0 }).revoke(id)
        out(revoked ? `Revoked ${id}.` : `${id} was already revoked.`)
        return 0
      }
      case 'clients create':
      case 'clients list':
      case 'clients delete':
        return await runClientsCommand(db, sub ?? '', rest, out, config.port)
      default:
        throw new UsageError(`Unknown command "${argv.join(' ')}".\n\n${HELP}`)
    }
  } finally {
    await database.close()
  }
}

function requireEmail(value: string | undefined, flag: string): string {
  if (value === undefined || !isEmail(value)) throw new UsageError(`${flag} must be an email address.`)
  return value
}

export async function main(argv: string[]): Promise<void> {
  try {
    const code = await runCli(argv)
    if (code >= 0) process.exitCode = code
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError || error instanceof ClientsUsageError) {
      console.error(error.message)
      process.exitCode = 2
    } else if (
      error instanceof Error &&
      error.name === 'TypeError' &&
      'code' in error &&
      String(error.code).startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`${error.message}\n\n${HELP}`)
      process.exitCode = 2
    } else {
      console.error(error instanceof Error ? error.message : error)
      process.exitCode = 1
    }
  }
}
