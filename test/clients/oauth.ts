import { createClient } from '../../src/oauth/clients-service.ts'
import type { LiveServer } from '../helpers/live-server.ts'

/** An OAuth client (client credentials, read:pets and write:pets) of the account, as env variables. */
export async function oauthClientEnv(live: LiveServer, accountId: string): Promise<Record<string, string>> {
  const { clientSecret, info } = await createClient(live.database.db, {
    accountId,
    name: 'client library tests',
    scopes: ['read:pets', 'write:pets'],
  })
  return { PET_SERVICE_CLIENT_ID: info.client_id, PET_SERVICE_CLIENT_SECRET: clientSecret }
}
