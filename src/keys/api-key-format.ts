import { crc32 } from 'node:zlib'
import { API_KEY_PREFIX } from '../access/credential-kinds.ts'
import { randomBase62, toBase62 } from '../lib/ids.ts'

/**
 * Secret API keys look like `pet_sk_` + 30 random base62 characters + a 6-character checksum.
 * The fixed prefix lets secret scanners recognise leaked keys; the checksum (CRC-32 of the rest,
 * in base62) rejects typos and random guesses without a database round trip.
 */
export { API_KEY_PREFIX }

const RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
export const API_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH
const SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

function checksum(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH)
}

export function generateApiKey(): string {
  const body = API_KEY_PREFIX + randomBase62(RANDOM_LENGTH)
  return body + checksum(body)
}

export type KeyShape = 'ok' | 'malformed' | 'bad_checksum'

export function checkApiKeyShape(candidate: string): KeyShape {
  if (!SHAPE.test(candidate)) return 'malformed'
  const body = candidate.slice(0, -CHECKSUM_LENGTH)
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH) ? 'ok' : 'bad_checksum'
}

/** What may be shown of a key: its prefix and a few characters, then its last four. */
export function redactApiKey(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…${key.slice(-4)}`
}
