import { crc32 } from 'node:zlib'
import { API_KEY_PREFIX, TEST_API_KEY_PREFIX } from '../access/credential-kinds.ts'
import { randomBase62, toBase62 } from '../lib/ids.ts'

/**
 * Secret API keys look like `pet_sk_` + 30 random base62 characters + a 6-character checksum;
 * a sandbox's keys like `pet_sk_test_` + the same. The fixed prefix lets secret scanners
 * recognise leaked keys, and a reader see at a glance which keys reach test data; the checksum
 * (CRC-32 of the rest, prefix included, in base62) rejects typos and random guesses without a
 * database round trip.
 */
export { API_KEY_PREFIX, TEST_API_KEY_PREFIX }

/** Which data a key reaches: a live account's, or a sandbox's. */
export type KeyMode = 'live' | 'sandbox'

const RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
export const API_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH
export const TEST_API_KEY_LENGTH = TEST_API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH
const TAIL = `[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`
const LIVE_SHAPE = new RegExp(`^${API_KEY_PREFIX}${TAIL}`)
const TEST_SHAPE = new RegExp(`^${TEST_API_KEY_PREFIX}${TAIL}`)

function checksum(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH)
}

export function prefixOf(mode: KeyMode): string {
  return mode === 'sandbox' ? TEST_API_KEY_PREFIX : API_KEY_PREFIX
}

export function generateApiKey(mode: KeyMode = 'live'): string {
  const body = prefixOf(mode) + randomBase62(RANDOM_LENGTH)
  return body + checksum(body)
}

/** The mode a key's shape names, or undefined when it has the shape of neither. */
export function apiKeyMode(candidate: string): KeyMode | undefined {
  if (LIVE_SHAPE.test(candidate)) return 'live'
  if (TEST_SHAPE.test(candidate)) return 'sandbox'
  return undefined
}

export type KeyShape = 'ok' | 'malformed' | 'bad_checksum'

export function checkApiKeyShape(candidate: string): KeyShape {
  if (apiKeyMode(candidate) === undefined) return 'malformed'
  const body = candidate.slice(0, -CHECKSUM_LENGTH)
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH) ? 'ok' : 'bad_checksum'
}

/** What may be shown of a key: its prefix and a few characters, then its last four. */
export function redactApiKey(key: string): string {
  return `${key.slice(0, prefixOf(apiKeyMode(key) ?? 'live').length + 4)}…${key.slice(-4)}`
}
