import type { LiveServer } from './servers.ts'

/**
 * An OAuth client (client credentials, write:pets) of the API key's account, as environment
 * variables for the Python and CLI tests — or none while the service has no OAuth server.
 */
export async function oauthClientEnv(_live: LiveServer, _apiKey: string): Promise<Record<string, string>> {
  return {}
}
