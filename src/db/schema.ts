import type { Generated } from 'kysely'

/**
 * The database as Kysely sees it: one interface per table. Timestamps are ISO-8601 strings
 * (UTC, millisecond precision) on both dialects so that ordering and comparison agree; JSON
 * columns hold text written and read by the repositories.
 */
export interface Database {
  accounts: AccountsTable
  api_keys: ApiKeysTable
  users: UsersTable
  pets: PetsTable
  orders: OrdersTable
  events: EventsTable
  idempotency_keys: IdempotencyKeysTable
  oauth_clients: OAuthClientsTable
  oauth_store: OAuthStoreTable
  oauth_revocations: OAuthRevocationsTable
  oauth_keys: OAuthKeysTable
  dashboard_sessions: DashboardSessionsTable
  sign_in_attempts: SignInAttemptsTable
  pet_images: PetImagesTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  webhook_cursors: WebhookCursorsTable
  account_sequences: AccountSequencesTable
  request_log: RequestLogTable
}

export interface AccountsTable {
  id: string
  email: string
  password_hash: string | null
  created_at: string
  /** Set on a sandbox: the live account it belongs to (one sandbox per live account). */
  live_account_id: string | null
}

export interface ApiKeysTable {
  id: string
  account_id: string
  name: string
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string
  /** The first characters of the key (product and kind prefix plus a few more), for display. */
  prefix: string
  last4: string
  /** Space-separated scopes the key is restricted to; null means every scope. */
  scopes: string | null
  created_at: string
  last_used_at: string | null
  expires_at: string | null
  revoked_at: string | null
}

export interface UsersTable {
  /** Internal ordering key for keyset pagination; never shown. */
  seq: Generated<number>
  id: string
  account_id: string
  name: string
  email: string | null
  phone: string | null
  version: number
  created_at: string
  updated_at: string
  /** The integer id v2 shows; unique in its account (src/db/migrations/2026-11-24T10-usernames.ts). */
  petstore_id: number
  /** Petstore v2 fields (null when never set). `username` is unique in its account. */
  username: string | null
  first_name: string | null
  last_name: string | null
  /** scrypt hash of the v2 `password`; the password itself is never stored. */
  password_hash: string | null
  user_status: number | null
}

export interface PetsTable {
  /** Internal order of creation (v1 lists newest first, cursors); global, never shown. */
  seq: Generated<number>
  /** The pet's id, unique within its account (src/db/account-ids.ts). */
  id: number
  account_id: string
  name: string
  owner_id: string | null
  species: string | null
  breed: string | null
  status: string
  /** JSON array of strings. */
  photo_urls: string
  /** JSON object {id?, name?} or null. */
  category: string | null
  /** JSON array of {id?, name?}, or null when never set. */
  tags: string | null
  /** 1 when the last v2 write left `status` out: v2 reads omit it (v1 still shows it). */
  status_omitted: Generated<number>
  version: number
  created_at: string
  updated_at: string
}

/** Store orders (src/orders/); `id` is per account, `seq` the internal creation order. */
export interface OrdersTable {
  seq: Generated<number>
  account_id: string
  id: number
  /** A pet of the account when the order was written; not a foreign key (orders outlive pets). */
  pet_id: number
  quantity: number
  /** RFC 3339 date-time exactly as sent, or null. */
  ship_date: string | null
  status: string
  /** 1 or 0 (portable across dialects). */
  complete: number
  version: number
  created_at: string
  updated_at: string
}

/** Per-account id counters (src/db/account-ids.ts). */
export interface AccountSequencesTable {
  account_id: string
  /** The kind of record: a key of ID_KINDS (`pet`, …). */
  kind: string
  /** The first id no process has reserved yet. */
  next_id: number
}

export interface EventsTable {
  seq: Generated<number>
  id: string
  account_id: string
  type: string
  object_id: string
  /** JSON: the object after the change (before it, for deletions). */
  data: string
  /** JSON: the changed attributes' earlier values, for updates. */
  previous_attributes: string | null
  created_at: string
}

export interface IdempotencyKeysTable {
  account_id: string
  key: string
  /** SHA-256 of method, path and parameters: the same key with other parameters is refused. */
  request_hash: string
  state: 'running' | 'done'
  response_status: number | null
  response_headers: string | null
  response_body: string | null
  created_at: string
  /**
   * 'running' rows exist only inside the transaction of the request that claimed the key (see
   * src/idempotency/idempotency.ts), so nothing but 'done' is ever committed. Versions before
   * 2026-11-23 committed 'running' claims; those are honoured until this time, then taken over.
   */
  locked_until: string
}

/** An uploaded pet image; it is deleted with its pet, or when the pet's photoUrls drop its URL. */
export interface PetImagesTable {
  /** The last segment of its URL: `{petId}-{16 random base64url characters}.{ext}`, unguessable. */
  name: string
  account_id: string
  pet_id: number
  content_type: string
  size_bytes: number
  data: Buffer
  created_at: string
}

/** A signed-in dashboard session; the cookie holds the id, the table only its SHA-256. */
export interface DashboardSessionsTable {
  id_hash: string
  account_id: string
  created_at: string
  expires_at: string
  user_agent: string | null
  /** Which of the signed-in account's two the dashboard shows. */
  mode: Generated<'live' | 'sandbox'>
}

/** Dashboard sign-in and sign-up attempts, counted to rate limit guessing per address and account. */
export interface SignInAttemptsTable {
  seq: Generated<number>
  kind: 'sign_in' | 'user_login' | 'sign_up'
  /** Normalised email the attempt named (null when none was given). */
  email: string | null
  ip: string
  /** 1 or 0 (portable across dialects). */
  succeeded: number
  created_at: string
}

/** OAuth clients; each belongs to one account. */
export interface OAuthClientsTable {
  client_id: string
  account_id: string
  name: string
  /** SHA-256 of the client secret, hex. The secret itself is never stored; '' for a public client. */
  secret_hash: string
  /** `public`: a browser or mobile app without a secret (PKCE only); `confidential`: has a secret. */
  client_type: 'confidential' | 'public'
  /** JSON array of redirect URIs (empty: client credentials only). */
  redirect_uris: string
  /** Space-separated scopes the client may ask for. */
  scopes: string
  created_at: string
}

/** oidc-provider's storage: every model (Session, Grant, RefreshToken, …) in one table. */
export interface OAuthStoreTable {
  model: string
  id: string
  /** JSON payload as the provider gave it. */
  payload: string
  grant_id: string | null
  uid: string | null
  expires_at: string | null
  consumed_at: string | null
}

/** Revoked JWT access tokens, grants and clients (`jti:…`, `grant:…`, `client:…`) until their tokens expire. */
export interface OAuthRevocationsTable {
  seq: Generated<number>
  subject: string
  expires_at: string
  created_at: string
}

/** The authorisation server's signing and cookie keys, shared by every instance. */
export interface OAuthKeysTable {
  id: string
  /** JSON: a private JWK, or a list of cookie secrets. */
  value: string
  created_at: string
}

/** Webhook endpoints (src/webhooks/); secrets AES-256-GCM encrypted (src/webhooks/secret-box.ts). */
export interface WebhookEndpointsTable {
  seq: Generated<number>
  id: string
  account_id: string
  url: string
  /** JSON array of event types, `pet.*` prefixes or `*`. */
  enabled_events: string
  description: string | null
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  secret_encrypted: string
  /** The secret before the last rotation, signing alongside the new one until it expires. */
  previous_secret_encrypted: string | null
  previous_secret_expires_at: string | null
  /** Start of the current run of failed attempts (null after any success). */
  failing_since: string | null
  created_at: string
  updated_at: string
}

/** One event to send to one endpoint: what the worker claims, sends and retries. */
export interface WebhookDeliveriesTable {
  seq: Generated<number>
  id: string
  endpoint_id: string
  account_id: string
  event_id: string
  /** Orders deliveries of one object (0 for test events). */
  event_seq: number
  event_type: string
  object_id: string
  /** The exact body sent, kept so retries outlive the event's retention. */
  payload: string
  /** `endpoint:event` for fan-out rows (so a repeated fan-out inserts nothing); null for resends and tests. */
  dedupe_key: string | null
  status: 'pending' | 'retrying' | 'succeeded' | 'failed'
  attempts: number
  next_attempt_at: string | null
  /** A worker holds the delivery until then; after it (a crash), another may take it. */
  locked_until: string | null
  created_at: string
  updated_at: string
}

/** The delivery log: one row per HTTP request made to an endpoint. */
export interface WebhookAttemptsTable {
  seq: Generated<number>
  id: string
  delivery_id: string
  endpoint_id: string
  account_id: string
  event_id: string
  event_type: string
  attempt: number
  status: 'succeeded' | 'retrying' | 'failed'
  attempted_at: string
  response_status: number | null
  latency_ms: number | null
  response_body_excerpt: string | null
  error: string | null
  next_attempt_at: string | null
}

/** One authenticated API request, for its account (src/request-logs/). */
export interface RequestLogTable {
  seq: Generated<number>
  /** `req_log_…`, what the API and the dashboard name it by. */
  id: string
  account_id: string
  created_at: string
  method: string
  /** The path as sent, ids kept; the values of secret query parameters replaced by `***`. */
  path: string
  status: number
  /** The problem's `code` of a failure (or the OAuth `error`). */
  error_code: string | null
  duration_ms: number
  request_id: string
  credential_kind: 'api_key' | 'oauth'
  /** The API key's id (`key_…`) or the OAuth client's id: never a secret. */
  credential_id: string
  client_address: string
  /** `v1`, `v2` or `oauth` (the token endpoint). */
  api_version: string
  /** Failures only: JSON, redacted (src/errors/redact.ts) and capped. */
  request_headers: string | null
  request_body: string | null
  response_body: string | null
}

/** How far a background job has read `events` (by seq). */
export interface WebhookCursorsTable {
  name: string
  seq: number
  updated_at: string
}

/** What repositories take: the database itself or a transaction on it (a Transaction is a Kysely). */
export type Db = import('kysely').Kysely<Database>
