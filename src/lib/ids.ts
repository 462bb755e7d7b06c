import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Uniformly random base62 text (rejection sampling, so no character is more likely). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

/** Fixed-width base62 rendering of a non-negative integer. */
export function toBase62(value: number, width: number): string {
  let out = ''
  let rest = value
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

/** Public identifier: a type prefix and 20 random base62 characters (~119 bits). */
export function newId(prefix: 'acct' | 'usr' | 'key' | 'evt'): string {
  return `${prefix}_${randomBase62(20)}`
}
