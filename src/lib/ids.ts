import { randomBytes, randomFillSync } from 'node:crypto'

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

/**
 * Random bytes for public identifiers (ids, request ids), drawn from the CSPRNG 4 KiB at a
 * time: one randomFillSync per id cost about a tenth of a whole request (see the README's
 * Performance section). Each byte is used once. Secrets (API keys, client secrets) keep
 * calling randomBase62, so no future secret ever waits in this buffer.
 */
const idPool = Buffer.alloc(4096)
let idPoolOffset = idPool.length

/** Like randomBase62, from the pooled bytes: for identifiers that are not secrets. */
export function randomIdText(length: number): string {
  let out = ''
  while (out.length < length) {
    if (idPoolOffset === idPool.length) {
      randomFillSync(idPool)
      idPoolOffset = 0
    }
    const byte = idPool[idPoolOffset++]!
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

/** Public identifier: a type prefix and 20 random base62 characters (~119 bits). */
export function newId(prefix: 'acct' | 'usr' | 'key' | 'we' | 'wd' | 'dlv'): string {
  return `${prefix}_${randomIdText(20)}`
}

/**
 * Public identifier whose text sorts by creation time: a type prefix, the time in milliseconds
 * (8 base62 characters, good until the year 8900) and 12 random characters (~71 bits). For
 * append-mostly tables (events, request logs): a random id would put every insert on a random
 * page of the id index, which costs several times an insert at the index's end.
 */
export function newTimeOrderedId(prefix: 'evt' | 'rlog' | 'req', now = Date.now()): string {
  return `${prefix}_${toBase62(now, 8)}${randomIdText(12)}`
}
