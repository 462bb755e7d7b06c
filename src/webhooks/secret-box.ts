import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM. Unlike API keys they cannot be
 * stored as hashes: the service needs the secret itself to sign every delivery. Stored form:
 * `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url), the key id being the first bytes of the
 * key's SHA-256, so a secret encrypted under another key is reported as such, not as garbage.
 */
export class SecretBox {
  readonly #key: Buffer
  readonly keyId: string

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The webhook secrets key must be 32 bytes (AES-256).')
    this.#key = key
    this.keyId = createHash('sha256').update(key).digest('base64url').slice(0, 8)
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    const parts = [iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString('base64url'))
    return ['v1', this.keyId, ...parts].join('.')
  }

  decrypt(stored: string): string {
    const [version, keyId, iv, ciphertext, tag] = stored.split('.')
    if (version !== 'v1' || iv === undefined || ciphertext === undefined || tag === undefined) {
      throw new Error('Not an encrypted webhook secret.')
    }
    if (keyId !== this.keyId) {
      throw new Error(
        `This webhook secret was encrypted under another key (${keyId}, this one is ${this.keyId}): WEBHOOK_SECRETS_KEY changed.`,
      )
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    )
  }
}

/** Parses WEBHOOK_SECRETS_KEY: base64 (or base64url) of exactly 32 bytes. */
export function parseSecretsKey(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64')
  if (key.length !== 32) {
    throw new Error(
      `WEBHOOK_SECRETS_KEY must be the base64 of 32 random bytes (it decodes to ${key.length}); make one with \`openssl rand -base64 32\`.`,
    )
  }
  return key
}
