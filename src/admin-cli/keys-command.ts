import type { Command } from 'commander'
import { ALL_SCOPES, parseScopes } from '../access/scopes.ts'
import { findAccountByEmail, findOrCreateAccount } from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import {
  createApiKey,
  findApiKeyById,
  KeyAuthenticator,
  listApiKeys,
  toApiKeyInfo,
} from '../keys/keys-service.ts'
import { findSandboxOf, openSandbox } from '../sandboxes/sandboxes-service.ts'
import { type CliIo, UsageError } from './cli-io.ts'
import { requireEmail } from './emails.ts'

type WithDb = (work: (db: Db) => Promise<void>) => Promise<void>

interface CreateOptions {
  account?: string
  name?: string
  scope?: string
  expiresInDays?: string
  sandbox?: boolean
  json?: boolean
}

/** `pet-service keys create|list|revoke`. */
export function addKeysCommands(program: Command, io: CliIo, withDb: WithDb, baseUrl: () => string): void {
  const keys = program.command('keys').description('API keys (v1)')
  keys
    .command('create')
    .description('create an API key, and its account if there is none; the key is shown once')
    .option('--account <email>', "the account's email (required)")
    .option('--name <label>', 'a label for the key')
    .option('--scope <scopes>', 'restrict it to these scopes, e.g. "read:pets write:pets"')
    .option('--expires-in-days <n>', 'expire it after N days (1-3650)')
    .option('--sandbox', "a key of the account's sandbox (pet_sk_test_…), created with it if there is none")
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  pet-service keys create --account me@example.com\n  pet-service keys create --account me@example.com --sandbox --name ci\n  pet-service keys create --account me@example.com --name ci --scope "read:pets" --expires-in-days 30 --json',
    )
    .action((options: CreateOptions) =>
      withDb(async (db) => {
        const email = requireEmail(options.account, '--account')
        let scopes = null
        if (options.scope !== undefined) {
          const parsed = parseScopes(options.scope)
          if (parsed.unknown.length > 0)
            throw new UsageError(
              `Unknown scope(s): ${parsed.unknown.join(', ')}. Known: ${ALL_SCOPES.join(' ')}.`,
            )
          scopes = parsed.scopes
        }
        let expiresAt = null
        if (options.expiresInDays !== undefined) {
          const days = Number(options.expiresInDays)
          if (!(days > 0 && days <= 3650))
            throw new UsageError('--expires-in-days must be a number of days from 1 to 3650.')
          expiresAt = new Date(Date.now() + days * 86_400_000)
        }
        const { account: live } = await findOrCreateAccount(db, email)
        const account = options.sandbox === true ? (await openSandbox(db, live.id)).sandbox : live
        const mode = options.sandbox === true ? 'sandbox' : 'live'
        const { apiKey, info } = await createApiKey(db, {
          accountId: account.id,
          ...(options.name === undefined ? {} : { name: options.name }),
          scopes,
          expiresAt,
        })
        if (options.json) {
          io.out(
            JSON.stringify({
              api_key: apiKey,
              key_id: info.id,
              account_id: account.id,
              email: live.email,
              mode,
              name: info.name,
              scopes: info.scopes,
              expires_at: info.expires_at,
            }),
          )
        } else {
          io.out(
            `API key for ${options.sandbox === true ? `the sandbox of ${live.email}` : live.email} (${account.id}), shown only this once:\n\n  ${apiKey}\n\nKey id: ${info.id}. For petctl and the client libraries:\n\n  export PET_SERVICE_API_KEY=${apiKey}\n\nTry it: curl -u ${apiKey}: -d name=Rex ${baseUrl()}/v1/pet`,
          )
        }
      }),
    )

  keys
    .command('list')
    .description("list an account's keys (redacted)")
    .option('--account <email>', "the account's email (required)")
    .option('--sandbox', "the keys of the account's sandbox")
    .option('--json', 'print the result as JSON')
    .action((options: { account?: string; sandbox?: boolean; json?: boolean }) =>
      withDb(async (db) => {
        const email = requireEmail(options.account, '--account')
        const live = await findAccountByEmail(db, email)
        if (live === undefined) throw new UsageError(`No account for ${email}.`)
        const account = options.sandbox === true ? await findSandboxOf(db, live.id) : live
        if (account === undefined) throw new UsageError(`${email} has no sandbox.`)
        const found = (await listApiKeys(db, account.id)).map(toApiKeyInfo)
        if (options.json) io.out(JSON.stringify(found))
        else if (found.length === 0) io.out(`No API keys for ${email}.`)
        else {
          for (const k of found) {
            const state = k.revoked_at
              ? `revoked ${k.revoked_at}`
              : k.expires_at
                ? `expires ${k.expires_at}`
                : 'active'
            io.out(
              `${k.id}  ${k.redacted}  ${k.name}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}  ${state}`,
            )
          }
        }
      }),
    )

  keys
    .command('revoke')
    .description('revoke a key at once (see keys list for ids)')
    .argument('<key-id>', 'the key id, key_…')
    .action((id: string) =>
      withDb(async (db) => {
        if ((await findApiKeyById(db, id)) === undefined) throw new UsageError(`No API key with id ${id}.`)
        const revoked = await new KeyAuthenticator(db, { cacheMs: 0 }).revoke(id)
        io.out(revoked ? `Revoked ${id}.` : `${id} was already revoked.`)
      }),
    )
}
