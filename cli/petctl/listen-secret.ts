/**
 * The secret `petctl listen` signs forwarded events with: one per account on this machine (the
 * account `GET /v1/account` names for the key), kept in petctl's config file, so a local receiver
 * configured with it keeps verifying across sessions and across keys of the same account (as
 * `stripe listen`'s does). A live account and its sandbox are two accounts, with a secret each.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { webhooks } from '../../clients/typescript/src/index.ts'
import { readConfigObject } from './config.ts'

/** The config file's member petctl keeps these in: `{ "sha256:…": { "secret": "whsec_…", … } }`. */
const MEMBER = 'listen_secrets'

export const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]+={0,2}$/

export interface SessionSecret {
  secret: string
  /** How the session came by it, in brackets after it: new or the same as before, and where it is kept. */
  note: string
}

export interface SecretRequest {
  /** The config file, whether or not it exists yet; undefined when there is no home to put it in. */
  file: { path: string } | undefined
  /** The key's account (`GET /v1/account`): the secret is kept per account. */
  accountId: string
  /** The key, only to find a secret kept per key by an earlier petctl (by its hash). */
  apiKey: string
  baseUrl: string
  /** `--secret`: sign with this one, and keep it. */
  given: string | undefined
  /** `--new-secret`: replace the kept one. */
  renew: boolean
}

/** This session's secret: the kept one, or a new (or given) one, which is then kept. */
export function sessionSecret(request: SecretRequest): SessionSecret {
  const { file, given } = request
  if (file === undefined) {
    return {
      secret: given ?? webhooks.generateSecret(),
      note: `(${origin(given)}, for this session only: no config file to keep it in; set PET_SERVICE_CONFIG or HOME)`,
    }
  }
  const config = existsSync(file.path) ? readConfigObject(file.path) : {}
  const kept = asRecord(config[MEMBER])
  const name = `account:${request.accountId}`
  // An earlier petctl kept one secret per key: that one becomes the account's.
  const previous = asRecord(kept[name]).secret ?? asRecord(kept[keyEntryName(request.apiKey)]).secret
  const stored = typeof previous === 'string' && SECRET_FORMAT.test(previous) ? previous : undefined
  if (stored !== undefined && !request.renew && (given === undefined || given === stored))
    return { secret: stored, note: `(the same as last time, kept in ${file.path}; --new-secret replaces it)` }

  const secret = given ?? webhooks.generateSecret()
  const entry = { secret, url: request.baseUrl, created_at: new Date().toISOString() }
  try {
    write(file.path, { ...config, [MEMBER]: { ...kept, [name]: entry } })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { secret, note: `(${origin(given)}, for this session only: cannot write ${file.path}: ${reason})` }
  }
  const what = stored === undefined ? 'kept in' : 'replacing the one kept in'
  return { secret, note: `(${origin(given)}, ${what} ${file.path} for the next sessions)` }
}

/** How an earlier petctl named a key's entry: a hash (a random secret's hash reveals nothing of it). */
function keyEntryName(apiKey: string): string {
  return `sha256:${createHash('sha256').update(apiKey).digest('hex').slice(0, 32)}`
}

const origin = (given: string | undefined) => (given === undefined ? 'new' : 'from --secret')

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

/**
 * Replaces the file whole (a new file renamed over it: a reader never sees half of it), readable
 * by its owner only since it holds secrets; through a symbolic link, the file it points to.
 */
function write(path: string, config: Record<string, unknown>): void {
  const target = existsSync(path) ? realpathSync(path) : path
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  const temporary = `${target}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
  renameSync(temporary, target)
}
