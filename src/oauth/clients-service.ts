import type { AdapterPayload } from 'oidc-provider'
import { ALL_SCOPES, parseScopes, type Scope } from '../access/scopes.ts'
import type { Db } from '../db/schema.ts'
import { sha256Hex } from '../lib/hash.ts'
import { randomBase62 } from '../lib/ids.ts'
import { nowIso } from '../lib/time.ts'
import {
  type ClientRow,
  deleteClient,
  deleteStoredClientArtifacts,
  findClient,
  insertClient,
  listAllClients,
  listClients,
  setClientSecretHash,
} from './clients-repository.ts'

export const CLIENT_ID_PREFIX = 'pet_ci_'
export const CLIENT_SECRET_PREFIX = 'pet_cs_'

/**
 * `public`: a browser or mobile app, which cannot keep a secret (RFC 6749 §2.1). It has none,
 * uses only the code flow with PKCE S256, and its refresh tokens rotate on every use.
 */
export type ClientType = ClientRow['client_type']

/** What may be shown of a client: never the secret, never its hash. */
export interface ClientInfo {
  client_id: string
  object: 'oauth_client'
  account_id: string
  name: string
  client_type: ClientType
  redirect_uris: string[]
  scopes: Scope[]
  grant_types: string[]
  created_at: string
}

export function toClientInfo(row: ClientRow): ClientInfo {
  const redirectUris = JSON.parse(row.redirect_uris) as string[]
  return {
    client_id: row.client_id,
    object: 'oauth_client',
    account_id: row.account_id,
    name: row.name,
    client_type: row.client_type,
    redirect_uris: redirectUris,
    scopes: parseScopes(row.scopes).scopes,
    grant_types: grantTypes(row.client_type, redirectUris),
    created_at: row.created_at,
  }
}

/**
 * A confidential client may use client credentials, and the code flow when it has redirect URIs;
 * a public one only the code flow (client credentials without a secret would be anyone's).
 */
function grantTypes(type: ClientType, redirectUris: string[]): string[] {
  if (type === 'public') return ['authorization_code', 'refresh_token']
  return redirectUris.length === 0
    ? ['client_credentials']
    : ['client_credentials', 'authorization_code', 'refresh_token']
}

/** The secret as the provider compares it: its SHA-256 (see client-secret middleware). */
export function providerSecret(secret: string): string {
  return sha256Hex(secret)
}

/**
 * The metadata oidc-provider sees for a client. `client_secret` is the hash of the real secret:
 * the middleware in front of the provider hashes what clients present before it compares.
 */
export function clientMetadata(row: ClientRow): AdapterPayload {
  const info = toClientInfo(row)
  const authentication: Pick<AdapterPayload, 'client_secret' | 'token_endpoint_auth_method'> =
    row.client_type === 'public'
      ? { token_endpoint_auth_method: 'none' }
      : { client_secret: row.secret_hash, token_endpoint_auth_method: 'client_secret_basic' }
  return {
    client_id: row.client_id,
    ...authentication,
    client_name: row.name,
    redirect_uris: info.redirect_uris,
    grant_types: info.grant_types,
    response_types: info.redirect_uris.length === 0 ? [] : ['code'],
    scope: info.scopes.join(' '),
    account_id: row.account_id,
  }
}

export class ClientInputError extends Error {}

export function validateRedirectUri(uri: string): string {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw new ClientInputError(`Redirect URI ${JSON.stringify(uri)} is not an absolute URL.`)
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ClientInputError(`Redirect URI ${uri} must use https (http only for localhost).`)
  }
  if (url.hash !== '') throw new ClientInputError(`Redirect URI ${uri} must not have a fragment.`)
  return uri
}

export interface NewClient {
  accountId: string
  name?: string
  scopes?: Scope[]
  redirectUris?: string[]
}

/** A confidential client: its secret is returned, to be shown once, and stored only hashed. */
export async function createClient(
  db: Db,
  input: NewClient,
): Promise<{ clientSecret: string; info: ClientInfo }> {
  const clientSecret = `${CLIENT_SECRET_PREFIX}${randomBase62(40)}`
  const row = clientRow(input, 'confidential', providerSecret(clientSecret))
  await insertClient(db, row)
  return { clientSecret, info: toClientInfo(row) }
}

/** A public client (a browser or mobile app): no secret; it needs a redirect URI for the code flow. */
export async function createPublicClient(db: Db, input: NewClient): Promise<{ info: ClientInfo }> {
  if ((input.redirectUris ?? []).length === 0) {
    throw new ClientInputError(
      'A public client needs at least one redirect URI: the authorization code flow is the only one it may use.',
    )
  }
  const row = clientRow(input, 'public', '')
  await insertClient(db, row)
  return { info: toClientInfo(row) }
}

function clientRow(input: NewClient, type: ClientType, secretHash: string): ClientRow {
  return {
    client_id: `${CLIENT_ID_PREFIX}${randomBase62(24)}`,
    account_id: input.accountId,
    name: input.name?.trim() || 'OAuth client',
    secret_hash: secretHash,
    client_type: type,
    redirect_uris: JSON.stringify((input.redirectUris ?? []).map(validateRedirectUri)),
    scopes: (input.scopes === undefined || input.scopes.length === 0 ? ALL_SCOPES : input.scopes).join(' '),
    created_at: nowIso(),
  }
}

export async function listClientsOfAccount(db: Db, accountId: string): Promise<ClientInfo[]> {
  return (await listClients(db, accountId)).map(toClientInfo)
}

export async function listEveryClient(db: Db): Promise<ClientInfo[]> {
  return (await listAllClients(db)).map(toClientInfo)
}

/**
 * Deletes a client, its stored grants and refresh tokens, and (through `onDeleted`) records it
 * as revoked so its unexpired JWT access tokens are refused too.
 */
export async function removeClient(
  db: Db,
  clientId: string,
  options: { accountId?: string; onDeleted?: (clientId: string) => Promise<void> } = {},
): Promise<boolean> {
  const deleted = await db.transaction().execute(async (trx) => {
    if (!(await deleteClient(trx, clientId, options.accountId))) return false
    await deleteStoredClientArtifacts(trx, clientId)
    return true
  })
  if (deleted) await options.onDeleted?.(clientId)
  return deleted
}

/**
 * Gives the account's confidential client a new secret (the old one stops working at once);
 * returns it, to be shown once. Undefined when the account has no such client, or it is public.
 */
export async function rotateClientSecret(
  db: Db,
  accountId: string,
  clientId: string,
): Promise<string | undefined> {
  const secret = `${CLIENT_SECRET_PREFIX}${randomBase62(40)}`
  return (await setClientSecretHash(db, accountId, clientId, providerSecret(secret))) ? secret : undefined
}

export { findClient }
