import { wrongCredentialForV1 } from '../access/credential-kinds.ts'
import type { Principal } from '../access/principal.ts'
import { isScope, type Scope } from '../access/scopes.ts'
import { findAccountById, modeOf } from '../accounts/accounts-service.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { redactSecret } from '../errors/redact.ts'
import { sha256Hex } from '../lib/hash.ts'
import { newId } from '../lib/ids.ts'
import { nowIso } from '../lib/time.ts'
import { API_KEY_PREFIX, checkApiKeyShape, generateApiKey, prefixOf } from './api-key-format.ts'
import {
  type ApiKeyRow,
  findApiKeyByHash,
  insertApiKey,
  revokeApiKey,
  touchApiKey,
} from './keys-repository.ts'

/** The view of a key that may be shown or logged: never the secret, never its hash. */
export interface ApiKeyInfo {
  id: string
  object: 'api_key'
  account_id: string
  name: string
  redacted: string
  scopes: Scope[] | null
  created_at: string
  last_used_at: string | null
  expires_at: string | null
  revoked_at: string | null
}

export function toApiKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    object: 'api_key',
    account_id: row.account_id,
    name: row.name,
    redacted: `${row.prefix}…${row.last4}`,
    scopes: row.scopes === null ? null : (row.scopes.split(' ').filter(isScope) as Scope[]),
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  }
}

export async function createApiKey(
  db: Db,
  input: { accountId: string; name?: string; scopes?: Scope[] | null; expiresAt?: Date | null },
): Promise<{ apiKey: string; info: ApiKeyInfo }> {
  const account = await findAccountById(db, input.accountId)
  if (account === undefined) throw new Error(`no account ${input.accountId} to create a key for`)
  // A sandbox's keys say so in their prefix (pet_sk_test_…), so no one mistakes one for live.
  const mode = modeOf(account)
  const apiKey = generateApiKey(mode)
  const row: ApiKeyRow = {
    id: newId('key'),
    account_id: input.accountId,
    name: input.name?.trim() || 'Secret key',
    key_hash: sha256Hex(apiKey),
    prefix: apiKey.slice(0, prefixOf(mode).length + 4),
    last4: apiKey.slice(-4),
    scopes: input.scopes == null ? null : input.scopes.join(' '),
    created_at: nowIso(),
    last_used_at: null,
    expires_at: input.expiresAt == null ? null : input.expiresAt.toISOString(),
    revoked_at: null,
  }
  await insertApiKey(db, row)
  return { apiKey, info: toApiKeyInfo(row) }
}

interface CacheEntry {
  row: ApiKeyRow | undefined
  fetchedAt: number
  /** The Principal `row` authenticates as, once a request has used it. */
  principal?: Principal
}

export interface KeyAuthenticatorOptions {
  /** How long a looked-up key is trusted; a revocation on another instance takes at most this long. */
  cacheMs: number
  /** last_used_at is written at most this often per key, off the request's path. */
  touchEveryMs?: number
  onBackgroundError?: (error: unknown) => void
  now?: () => number
}

/**
 * Turns an API key into a Principal. Keys are looked up by their SHA-256 (high-entropy secrets
 * need no slow hash) and the answer is cached briefly so that a busy client costs no database
 * round trip per request. Revocations through `revoke()` take effect at once on this instance.
 */
export class KeyAuthenticator {
  readonly #cache = new Map<string, CacheEntry>()
  readonly #lastTouch = new Map<string, number>()
  readonly #now: () => number
  readonly #touchEveryMs: number

  constructor(
    private readonly db: Db,
    private readonly options: KeyAuthenticatorOptions,
  ) {
    this.#now = options.now ?? Date.now
    this.#touchEveryMs = options.touchEveryMs ?? 60_000
  }

  async authenticate(apiKey: string): Promise<Principal> {
    const shape = checkApiKeyShape(apiKey)
    if (shape === 'malformed') {
      throw new ApiError(
        'api_key_invalid',
        wrongCredentialForV1(apiKey) ??
          `Invalid API key: it must look like ${API_KEY_PREFIX}… (or ${API_KEY_PREFIX}test_… for a sandbox) followed by 36 letters and digits.`,
      )
    }
    if (shape === 'bad_checksum') {
      throw new ApiError('api_key_invalid', 'Invalid API key: its checksum does not match; check for a typo.')
    }
    const keyHash = sha256Hex(apiKey)
    const entry = await this.#lookup(keyHash)
    const { row } = entry
    if (row === undefined)
      throw new ApiError('api_key_invalid', `Invalid API key ${redactSecret(apiKey)}: no such key.`)
    if (row.revoked_at !== null) {
      throw new ApiError(
        'api_key_revoked',
        `API key ${redactSecret(apiKey)} was revoked at ${row.revoked_at}.`,
      )
    }
    const now = this.#now()
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) {
      throw new ApiError('api_key_expired', `API key ${redactSecret(apiKey)} expired at ${row.expires_at}.`)
    }
    this.#touch(row, now)
    // Built once per looked-up row: nothing changes a Principal (its scopes are read-only), so
    // the requests of a cached key share it.
    entry.principal ??= {
      accountId: row.account_id,
      scopes: row.scopes === null ? null : new Set(row.scopes.split(' ').filter(isScope)),
      via: 'api_key',
      credentialId: row.id,
    }
    return entry.principal
  }

  /** Revokes a key; this instance refuses it from now on, others within `cacheMs`. */
  async revoke(id: string, accountId?: string): Promise<boolean> {
    const revoked = await revokeApiKey(this.db, id, nowIso(this.#now()), accountId)
    for (const [hash, entry] of this.#cache) {
      if (entry.row?.id === id) this.#cache.delete(hash)
    }
    return revoked
  }

  async #lookup(keyHash: string): Promise<CacheEntry> {
    const now = this.#now()
    const cached = this.#cache.get(keyHash)
    if (cached !== undefined && now - cached.fetchedAt < this.options.cacheMs) return cached
    const entry: CacheEntry = { row: await findApiKeyByHash(this.db, keyHash), fetchedAt: now }
    if (this.options.cacheMs > 0) {
      if (this.#cache.size >= 10_000) this.#cache.clear()
      this.#cache.set(keyHash, entry)
    }
    return entry
  }

  #touch(row: ApiKeyRow, now: number): void {
    const last = this.#lastTouch.get(row.id) ?? (row.last_used_at === null ? 0 : Date.parse(row.last_used_at))
    if (now - last < this.#touchEveryMs) return
    this.#lastTouch.set(row.id, now)
    touchApiKey(this.db, row.id, nowIso(now)).catch((error: unknown) =>
      this.options.onBackgroundError?.(error),
    )
  }
}

// For the dashboard's key pages and the admin CLI.
export { expireApiKeyAt, findApiKeyById, listApiKeys } from './keys-repository.ts'
