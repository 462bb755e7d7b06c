/**
 * Verifying (and, for tests and `petctl listen`, making) webhook signatures as the service sends
 * them: Standard Webhooks (https://www.standardwebhooks.com/, spec/standard-webhooks.md).
 *
 *   webhook-id:        the event id (stable across retries: de-duplicate on it)
 *   webhook-timestamp: Unix seconds
 *   webhook-signature: space-separated `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>`
 *                      (two entries while a rotated secret still signs alongside the new one)
 *
 * The key is the base64 after `whsec_`. Everything runs on Web Crypto (`crypto.subtle`), so it
 * works unchanged in browsers, Deno, workers and Node ≥ 20; HMAC checks go through
 * `subtle.verify`, which compares in constant time.
 */
import { PetServiceError } from './errors.ts'
import type { Event } from './event-types.ts'

/** Why a webhook was refused, as `WebhookVerificationError#reason`. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'no_valid_signature'
  | 'invalid_payload'

/** A webhook that must not be trusted; `reason` says why (and is also the error's `code`). */
export class WebhookVerificationError extends PetServiceError {
  readonly reason: WebhookVerificationReason

  constructor(reason: WebhookVerificationReason, message: string) {
    super({ message, code: reason })
    this.reason = reason
  }
}

/** The raw request headers: a fetch `Headers`, or a plain object as Node's `req.headers` is. */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>

/** The raw body, exactly as received: parsing and re-serialising JSON changes the bytes. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer

export interface VerifyOptions {
  /** Seconds a timestamp may be off from now, in either direction (replay window). Default 300. */
  tolerance?: number
  /** The current time (a Date or Unix milliseconds); for tests. Default `Date.now()`. */
  now?: Date | number
}

export interface SignOptions {
  /** The message id: the event id (`evt_…`). */
  id: string
  /** When it was signed: a Date, or Unix seconds. Default now. */
  timestamp?: Date | number
}

/**
 * The three Standard Webhooks headers, as the service sends them (a type literal, not an
 * interface, so it can be passed wherever a plain header record is expected).
 */
export type WebhookSignatureHeaders = {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

const DEFAULT_TOLERANCE_S = 5 * 60
const SECRET_PREFIX = 'whsec_'

/**
 * Checks that `payload` came from the service, signed with `secret` (or one of several, e.g.
 * while you roll your own copy of a rotated secret), within the tolerance, and answers the
 * parsed event. Throws WebhookVerificationError otherwise.
 *
 * ```ts
 * const event = await webhooks.verify(rawBody, request.headers, endpointSecret)
 * ```
 */
export async function verify<T = Event>(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id')
  const timestampText = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  const missing = [
    id === undefined ? 'webhook-id' : undefined,
    timestampText === undefined ? 'webhook-timestamp' : undefined,
    signatures === undefined ? 'webhook-signature' : undefined,
  ].filter((name) => name !== undefined)
  if (id === undefined || timestampText === undefined || signatures === undefined) {
    throw new WebhookVerificationError(
      'missing_header',
      `Missing the ${missing.join(', ')} header${missing.length > 1 ? 's' : ''}: this is not a signed webhook (or a proxy dropped the headers).`,
    )
  }
  const timestamp = parseTimestamp(timestampText)
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_S
  const now = Math.floor(toMillis(options.now ?? Date.now()) / 1000)
  if (now - timestamp > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `The webhook-timestamp is ${now - timestamp} s old, more than the ${tolerance} s allowed: a replay, or this machine's clock is wrong.`,
    )
  }
  if (timestamp - now > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `The webhook-timestamp is ${timestamp - now} s in the future, more than the ${tolerance} s allowed: check this machine's clock.`,
    )
  }
  const body = bytes(payload)
  const signed = concat(utf8(`${id}.${timestamp}.`), body)
  const candidates = signatures
    .split(' ')
    .map((entry) => entry.split(','))
    .filter((parts) => parts[0] === 'v1' && parts.length === 2)
    .map((parts) => decodeBase64(parts[1] ?? ''))
    .filter((signature) => signature !== undefined)
  const subtle = webCrypto()
  for (const key of (typeof secret === 'string' ? [secret] : secret).map(secretKey)) {
    const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
    for (const candidate of candidates) {
      // subtle.verify compares the MAC in constant time.
      if (await subtle.verify('HMAC', cryptoKey, candidate, signed)) return parse<T>(body)
    }
  }
  throw new WebhookVerificationError(
    'no_valid_signature',
    candidates.length === 0
      ? 'The webhook-signature header holds no v1 signature.'
      : 'No signature matches: the body was changed (verify the raw bytes, before any JSON parsing), or the secret is not this endpoint’s.',
  )
}

/**
 * The headers the service would send with `payload`: `webhook-signature` holds one `v1,…` entry
 * per secret given. For tests of your receiver, and for `petctl listen --forward-to`.
 */
export async function sign(
  payload: WebhookPayload,
  secret: string | readonly string[],
  options: SignOptions,
): Promise<WebhookSignatureHeaders> {
  if (options.id === '' || /[\s,.]/.test(options.id)) {
    throw new TypeError(`A webhook id must be non-empty, without spaces, commas or dots: ${options.id}`)
  }
  const timestamp =
    options.timestamp === undefined
      ? Math.floor(Date.now() / 1000)
      : options.timestamp instanceof Date
        ? Math.floor(options.timestamp.getTime() / 1000)
        : Math.floor(options.timestamp)
  const signed = concat(utf8(`${options.id}.${timestamp}.`), bytes(payload))
  const subtle = webCrypto()
  const entries: string[] = []
  for (const key of (typeof secret === 'string' ? [secret] : secret).map(secretKey)) {
    const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    entries.push(`v1,${encodeBase64(new Uint8Array(await subtle.sign('HMAC', cryptoKey, signed)))}`)
  }
  return {
    'webhook-id': options.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': entries.join(' '),
  }
}

/** A new random secret in the service's form: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  const key = new Uint8Array(32)
  cryptoGlobal().getRandomValues(key)
  return `${SECRET_PREFIX}${encodeBase64(key)}`
}

/** `client.webhooks` and the `webhooks` export: verify, sign, generateSecret. */
export const webhooks = { verify, sign, generateSecret } as const

/** Web Crypto, typed from whichever declarations compile this file (DOM's, or Node's). */
type WebCrypto = typeof globalThis.crypto

function cryptoGlobal(): WebCrypto {
  const c = (globalThis as { crypto?: WebCrypto }).crypto
  if (c?.subtle === undefined) {
    throw new TypeError(
      'Webhook signatures need Web Crypto (globalThis.crypto.subtle): Node ≥ 20, Deno, Bun or a browser on https.',
    )
  }
  return c
}

function webCrypto(): WebCrypto['subtle'] {
  return cryptoGlobal().subtle
}

/** The key bytes of a `whsec_…` secret (bare base64, as the reference library also takes). */
function secretKey(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  const key = decodeBase64(encoded)
  if (key === undefined || key.length === 0) {
    throw new TypeError(
      'A webhook secret is whsec_ followed by base64 (as the endpoint’s create answer shows it).',
    )
  }
  return key
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | readonly string[] | null | undefined
  if (typeof (headers as Headers).get === 'function') value = (headers as Headers).get(name)
  else {
    const record = headers as Record<string, string | readonly string[] | undefined>
    value = record[name]
    if (value === undefined) {
      const key = Object.keys(record).find((k) => k.toLowerCase() === name)
      value = key === undefined ? undefined : record[key]
    }
  }
  const text = typeof value === 'string' ? value : value?.join(' ')
  return text === undefined || text.trim() === '' ? undefined : text.trim()
}

function parseTimestamp(text: string): number {
  if (!/^\d{1,15}$/.test(text)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `The webhook-timestamp header must be Unix seconds, not ${JSON.stringify(text.slice(0, 40))}.`,
    )
  }
  return Number(text)
}

function toMillis(value: Date | number): number {
  return value instanceof Date ? value.getTime() : value
}

function parse<T>(body: Uint8Array): T {
  try {
    return JSON.parse(new TextDecoder().decode(body)) as T
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signature matches but the body is not JSON.')
  }
}

function bytes(payload: WebhookPayload): Uint8Array {
  if (typeof payload === 'string') return utf8(payload)
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload)
  if (payload instanceof Uint8Array) return payload
  throw new TypeError(
    'Pass the raw request body (a string, Uint8Array or ArrayBuffer), not parsed JSON: re-serialising changes the bytes that were signed.',
  )
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text)
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

function encodeBase64(data: Uint8Array): string {
  let binary = ''
  for (const byte of data) binary += String.fromCharCode(byte)
  return btoa(binary)
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text)
    const out = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
    return out
  } catch {
    return undefined
  }
}
