import { describe, expect, it } from 'vitest'
import {
  API_KEY_LENGTH,
  checkApiKeyShape,
  generateApiKey,
  redactApiKey,
} from '../../src/keys/api-key-format.ts'

describe('API key format', () => {
  it('generates prefixed keys of fixed length that pass their own checksum', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey))
    expect(keys.size).toBe(200)
    for (const key of keys) {
      expect(key).toMatch(/^pet_sk_[0-9A-Za-z]{36}$/)
      expect(key).toHaveLength(API_KEY_LENGTH)
      expect(checkApiKeyShape(key)).toBe('ok')
    }
  })

  it('detects a single mistyped character through the checksum', () => {
    const key = generateApiKey()
    const i = 10
    const typo = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1)
    expect(checkApiKeyShape(typo)).toBe('bad_checksum')
  })

  it('calls anything of the wrong shape malformed', () => {
    for (const bad of [
      '',
      'pet_sk_',
      'sk_live_abc',
      `${generateApiKey()}x`,
      generateApiKey().replace('pet_sk_', 'pet_pk_'),
    ]) {
      expect(checkApiKeyShape(bad)).toBe('malformed')
    }
  })

  it('redacts to the prefix and the last four characters', () => {
    const key = generateApiKey()
    const shown = redactApiKey(key)
    expect(shown.startsWith('pet_sk_')).toBe(true)
    expect(shown.endsWith(key.slice(-4))).toBe(true)
    expect(shown.length).toBeLessThan(20)
  })
})
