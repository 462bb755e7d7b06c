import { describe, expect, it } from 'vitest'
import {
  API_KEY_LENGTH,
  apiKeyMode,
  checkApiKeyShape,
  generateApiKey,
  redactApiKey,
  TEST_API_KEY_LENGTH,
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

  it("generates a sandbox's keys as pet_sk_test_… that pass their own checksum", () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey('sandbox')
      expect(key).toMatch(/^pet_sk_test_[0-9A-Za-z]{36}$/)
      expect(key).toHaveLength(TEST_API_KEY_LENGTH)
      expect(checkApiKeyShape(key)).toBe('ok')
      expect(apiKeyMode(key)).toBe('sandbox')
      expect(redactApiKey(key).startsWith('pet_sk_test_')).toBe(true)
    }
  })

  it('never reads a live key as a sandbox key, nor the reverse', () => {
    for (let i = 0; i < 200; i++) {
      expect(apiKeyMode(generateApiKey('live'))).toBe('live')
      expect(apiKeyMode(generateApiKey('sandbox'))).toBe('sandbox')
    }
    // A live key whose random part happens to start with "test" is still live…
    const live = generateApiKey().replace(/^pet_sk_..../, 'pet_sk_test')
    expect(apiKeyMode(live)).toBe('live')
    // …and moving the marker between the two kinds breaks the checksum, which covers the prefix.
    const sandbox = generateApiKey('sandbox')
    const relabelled = `pet_sk_${sandbox.slice('pet_sk_test_'.length)}`
    expect(checkApiKeyShape(relabelled)).not.toBe('ok')
    expect(checkApiKeyShape(`pet_sk_test_${generateApiKey().slice('pet_sk_'.length)}`)).toBe('bad_checksum')
  })
})
