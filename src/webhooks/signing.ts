import { createHmac, randomBytes } from 'node:crypto'

/**
 * Standard Webhooks signatures (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>`
 * entries, one per secret that signs (two during a rotation); the key is the base64 after `whsec_`.
 */
export const SECRET_PREFIX = 'whsec_'

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('A webhook secret starts with whsec_.')
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

/** One `v1,<signature>` entry. */
export function signatureEntry(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64')
  return `v1,${mac}`
}

/** The three headers of a delivery, signed by every secret given (the current one first). */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signatureEntry(s, id, timestampSeconds, body)).join(' '),
  }
}
