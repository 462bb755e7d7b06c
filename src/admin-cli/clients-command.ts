import type { Command } from 'commander'
import { ALL_SCOPES, parseScopes } from '../access/scopes.ts'
import { findAccountByEmail, findOrCreateAccount } from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import {
  type ClientInfo,
  ClientInputError,
  createClient,
  createPublicClient,
  findClient,
  listClientsOfAccount,
  listEveryClient,
  removeClient,
} from '../oauth/clients-service.ts'
import { RevocationList } from '../oauth/revocations.ts'
import { TTL } from '../oauth/ttl.ts'
import { type CliIo, UsageError } from './cli-io.ts'
import { requireEmail } from './emails.ts'

type WithDb = (work: (db: Db) => Promise<void>) => Promise<void>

interface CreateOptions {
  account?: string
  name?: string
  scope?: string
  redirectUri?: string[]
  public?: boolean
  json?: boolean
}

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** `pet-service clients create|list|delete`: OAuth clients without the dashboard. */
export function addClientsCommands(program: Command, io: CliIo, withDb: WithDb, baseUrl: () => string): void {
  const clients = program.command('clients').description('OAuth clients (v2)')
  clients
    .command('create')
    .description('create an OAuth client, and its account if there is none; the secret is shown once')
    .option('--account <email>', "the account's email (required)")
    .option('--name <name>', 'shown on the consent page')
    .option('--scope <scopes>', `scopes it may ask for (default: all of them, ${ALL_SCOPES.join(' ')})`)
    .option('--redirect-uri <uri>', 'for the authorization code flow; repeat for several', collect)
    .option(
      '--public',
      'a browser or mobile app: no secret, authorization code flow with PKCE only (needs --redirect-uri)',
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  pet-service clients create --account me@example.com --scope "read:pets write:pets" --json\n  pet-service clients create --account me@example.com --public --redirect-uri https://app.example.com/callback',
    )
    .action((options: CreateOptions) =>
      withDb(async (db) => {
        const email = requireEmail(options.account, '--account')
        const parsed = parseScopes(options.scope ?? '')
        if (parsed.unknown.length > 0) {
          throw new UsageError(
            `Unknown scope(s): ${parsed.unknown.join(', ')}. Known: ${ALL_SCOPES.join(' ')}.`,
          )
        }
        if (options.public && (options.redirectUri ?? []).length === 0) {
          throw new UsageError(
            'A public client needs --redirect-uri: the authorization code flow is the only one it may use.',
          )
        }
        const { account } = await findOrCreateAccount(db, email)
        const input = {
          accountId: account.id,
          ...(options.name === undefined ? {} : { name: options.name }),
          scopes: parsed.scopes,
          redirectUris: options.redirectUri ?? [],
        }
        let created: { clientSecret?: string; info: ClientInfo }
        try {
          created = options.public ? await createPublicClient(db, input) : await createClient(db, input)
        } catch (error) {
          if (error instanceof ClientInputError) throw new UsageError(error.message)
          throw error
        }
        const { clientSecret, info } = created
        if (clientSecret === undefined) {
          io.out(
            options.json
              ? JSON.stringify({ ...info, email: account.email })
              : `Public OAuth client for ${account.email} (${account.id}); it has no secret:\n\n  client_id:     ${info.client_id}\n  scopes:        ${info.scopes.join(' ')}\n  redirect URIs: ${info.redirect_uris.join(' ')}\n\nIt uses the authorization code flow with PKCE (S256): send account holders to\n${baseUrl()}/oauth/authorize, then exchange the code at /oauth/token with client_id and\ncode_verifier. A web page on another origin also needs that origin in CORS_ORIGINS.`,
          )
          return
        }
        if (options.json) {
          io.out(JSON.stringify({ ...info, client_secret: clientSecret, email: account.email }))
        } else {
          io.out(
            `OAuth client for ${account.email} (${account.id}); the secret is shown only this once:\n\n  client_id:     ${info.client_id}\n  client_secret: ${clientSecret}\n  scopes:        ${info.scopes.join(' ')}\n\nFor petctl and the client libraries:\n\n  export PET_SERVICE_CLIENT_ID=${info.client_id} PET_SERVICE_CLIENT_SECRET=${clientSecret}\n\nGet a token: curl -u ${info.client_id}:${clientSecret} -d grant_type=client_credentials ${baseUrl()}/oauth/token`,
          )
        }
      }),
    )

  clients
    .command('list')
    .description("list one account's OAuth clients, or every account's")
    .option('--account <email>', "only this account's")
    .option('--json', 'print the result as JSON')
    .action((options: { account?: string; json?: boolean }) =>
      withDb(async (db) => {
        let found: Awaited<ReturnType<typeof listEveryClient>>
        let whose = 'any account'
        if (options.account === undefined) found = await listEveryClient(db)
        else {
          const email = requireEmail(options.account, '--account')
          const account = await findAccountByEmail(db, email)
          if (account === undefined) throw new UsageError(`No account for ${email}.`)
          found = await listClientsOfAccount(db, account.id)
          whose = email
        }
        if (options.json) io.out(JSON.stringify(found))
        else if (found.length === 0) io.out(`No OAuth clients for ${whose}.`)
        else {
          for (const c of found) {
            io.out(
              `${c.client_id}  ${c.name}  ${c.client_type}  account ${c.account_id}  scopes ${c.scopes.join(' ')}  redirect ${c.redirect_uris.join(' ') || '-'}  created ${c.created_at}`,
            )
          }
        }
      }),
    )

  clients
    .command('delete')
    .description('delete a client; its tokens stop working')
    .argument('<client-id>', 'the client id, pet_ci_… (see clients list)')
    .action((id: string) =>
      withDb(async (db) => {
        if ((await findClient(db, id)) === undefined) throw new UsageError(`No OAuth client with id ${id}.`)
        const revocations = new RevocationList(db, { pollMs: 1000 })
        await removeClient(db, id, {
          onDeleted: (clientId) =>
            revocations.revoke(`client:${clientId}`, new Date(Date.now() + TTL.accessToken * 1000 + 60_000)),
        })
        io.out(`Deleted ${id}; its tokens are refused from now on (within 5 s on running instances).`)
      }),
    )
}
