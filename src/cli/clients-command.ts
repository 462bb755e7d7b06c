import { parseArgs } from 'node:util'
import { findAccountByEmail, findOrCreateAccount, isEmail } from '../accounts/accounts-repository.ts'
import { parseScopes } from '../auth/scopes.ts'
import type { Db } from '../db/schema.ts'
import {
  ClientInputError,
  createClient,
  findClient,
  listClientsOfAccount,
  listEveryClient,
  removeClient,
} from '../oauth/clients-service.ts'
import { RevocationList } from '../oauth/revocations.ts'
import { TTL } from '../oauth/ttl.ts'

export class ClientsUsageError extends Error {}

type Out = (line: string) => void

function requireEmail(value: string | undefined): string {
  if (value === undefined || !isEmail(value))
    throw new ClientsUsageError('--account must be an email address.')
  return value
}

/** `pet-service clients create|list|delete`: OAuth clients without the dashboard. */
export async function runClientsCommand(
  db: Db,
  sub: string,
  args: string[],
  out: Out,
  port: number,
): Promise<number> {
  switch (sub) {
    case 'create': {
      const { values } = parseArgs({
        args,
        options: {
          account: { type: 'string' },
          name: { type: 'string' },
          scope: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true },
          json: { type: 'boolean' },
        },
      })
      const email = requireEmail(values.account)
      const parsed = parseScopes(values.scope ?? '')
      if (parsed.unknown.length > 0) {
        throw new ClientsUsageError(
          `Unknown scope(s): ${parsed.unknown.join(', ')}. Known: read:pets write:pets read:users write:users.`,
        )
      }
      const { account } = await findOrCreateAccount(db, email)
      let created: Awaited<ReturnType<typeof createClient>>
      try {
        created = await createClient(db, {
          accountId: account.id,
          ...(values.name === undefined ? {} : { name: values.name }),
          scopes: parsed.scopes,
          redirectUris: values['redirect-uri'] ?? [],
        })
      } catch (error) {
        if (error instanceof ClientInputError) throw new ClientsUsageError(error.message)
        throw error
      }
      const { clientSecret, info } = created
      if (values.json) {
        out(JSON.stringify({ ...info, client_secret: clientSecret, email: account.email }))
      } else {
        out(
          `OAuth client for ${account.email} (${account.id}); the secret is shown only this once:\n\n  client_id:     ${info.client_id}\n  client_secret: ${clientSecret}\n  scopes:        ${info.scopes.join(' ')}\n\nGet a token: curl -u ${info.client_id}:${clientSecret} -d grant_type=client_credentials http://localhost:${port}/oauth/token`,
        )
      }
      return 0
    }
    case 'list': {
      const { values } = parseArgs({
        args,
        options: { account: { type: 'string' }, json: { type: 'boolean' } },
      })
      let clients: Awaited<ReturnType<typeof listEveryClient>>
      let whose = 'any account'
      if (values.account === undefined) clients = await listEveryClient(db)
      else {
        const email = requireEmail(values.account)
        const account = await findAccountByEmail(db, email)
        if (account === undefined) throw new ClientsUsageError(`No account for ${email}.`)
        clients = await listClientsOfAccount(db, account.id)
        whose = email
      }
      if (values.json) out(JSON.stringify(clients))
      else if (clients.length === 0) out(`No OAuth clients for ${whose}.`)
      else {
        for (const c of clients) {
          out(
            `${c.client_id}  ${c.name}  account ${c.account_id}  scopes ${c.scopes.join(' ')}  redirect ${c.redirect_uris.join(' ') || '-'}  created ${c.created_at}`,
          )
        }
      }
      return 0
    }
    case 'delete': {
      const id = args[0]
      if (id === undefined)
        throw new ClientsUsageError('Usage: pet-service clients delete CLIENT_ID (see clients list).')
      if ((await findClient(db, id)) === undefined)
        throw new ClientsUsageError(`No OAuth client with id ${id}.`)
      const revocations = new RevocationList(db, { pollMs: 1000 })
      await removeClient(db, id, {
        onDeleted: (clientId) =>
          revocations.revoke(`client:${clientId}`, new Date(Date.now() + TTL.accessToken * 1000 + 60_000)),
      })
      out(`Deleted ${id}; its tokens are refused from now on (within 5 s on running instances).`)
      return 0
    }
    default:
      throw new ClientsUsageError(`Unknown command "clients ${sub}": use clients create, list or delete.`)
  }
}
