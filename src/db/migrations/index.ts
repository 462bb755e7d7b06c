import type { Migration } from 'kysely'
import * as initial from './2026-11-22T00-initial.ts'
import * as oauth from './2026-11-22T01-oauth.ts'
import * as dashboard from './2026-11-22T02-dashboard.ts'
import * as images from './2026-11-23T03-images.ts'
import * as oauthSessionsHashed from './2026-11-23T06-oauth.ts'
import * as webhooks from './2026-11-24T07-webhooks.ts'
import * as accountSequences from './2026-11-24T08-account-sequences.ts'
import * as petsPerAccount from './2026-11-24T09-pets-per-account.ts'
import * as oauthPublicClients from './2026-11-24T10-oauth-public-clients.ts'
import * as usernames from './2026-11-24T10-usernames.ts'
import * as orders from './2026-11-24T11-orders.ts'
import * as webhookClaimsPerEndpoint from './2026-11-25T12-webhook-claims-per-endpoint.ts'
import * as requestLog from './2026-11-26T10-request-log.ts'
import * as sandboxAccounts from './2026-11-26T11-sandbox-accounts.ts'
import * as hotPathSchema from './2026-11-27T12-hot-path-schema.ts'

/** Every migration, by name; names sort in the order they run. Add new files, never edit old ones. */
export const migrations: Record<string, Migration> = {
  '2026-11-22T00-initial': initial,
  '2026-11-22T01-oauth': oauth,
  '2026-11-22T02-dashboard': dashboard,
  '2026-11-23T03-images': images,
  '2026-11-23T06-oauth': oauthSessionsHashed,
  '2026-11-24T07-webhooks': webhooks,
  '2026-11-24T08-account-sequences': accountSequences,
  '2026-11-24T09-pets-per-account': petsPerAccount,
  '2026-11-24T10-oauth-public-clients': oauthPublicClients,
  '2026-11-24T10-usernames': usernames,
  '2026-11-24T11-orders': orders,
  '2026-11-25T12-webhook-claims-per-endpoint': webhookClaimsPerEndpoint,
  '2026-11-26T10-request-log': requestLog,
  '2026-11-26T11-sandbox-accounts': sandboxAccounts,
  '2026-11-27T12-hot-path-schema': hotPathSchema,
}
