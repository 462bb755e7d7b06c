import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { type PasswordParty, passwordWork } from './password-work.ts'

/**
 * Account passwords, hashed with scrypt (N=2^15, r=8, p=1: 32 MiB each), stored as `scrypt$N$r$p$salt$hash` so the parameters can be raised later
 * without breaking old hashes. Every derivation goes through the password work queue
 * (password-work.ts), charged to the party that asked for it; past that party's bound it throws
 * a PasswordWorkBusyError.
 */
const N = 2 ** 15
const R = 8
const P = 1
const KEY_LENGTH = 32

function derive(
  party: PasswordParty,
  password: string,
  salt: Buffer,
  n: number,
  r: number,
  p: number,
  signal?: AbortSignal,
): Promise<Buffer> {
  return passwordWork.run(
    party,
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(
          password.normalize('NFC'),
          salt,
          KEY_LENGTH,
          { N: n, r, p, maxmem: 128 * n * r * 2 },
          (error, key) => (error ? reject(error) : resolve(key)),
        )
      }),
    signal,
  )
}

/** `signal`: the client went away; a derivation not yet started is dropped (password-work.ts). */
export async function hashPassword(
  password: string,
  party: PasswordParty,
  signal?: AbortSignal,
): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(party, password, salt, N, R, P, signal)
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

export async function verifyPassword(
  password: string,
  stored: string | null,
  party: PasswordParty,
): Promise<boolean> {
  if (stored === null) return false
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64url')
  const actual = await derive(
    party,
    password,
    Buffer.from(salt, 'base64url'),
    Number(n),
    Number(r),
    Number(p),
  )
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/**
 * A well-formed hash that no password matches (random salt and key, never derived): checking a
 * password against it costs what checking a real one costs, so unknown emails answer as slowly
 * as known ones.
 */
export function unmatchableHash(): string {
  const random = (bytes: number) => randomBytes(bytes).toString('base64url')
  return `scrypt$${N}$${R}$${P}$${random(16)}$${random(KEY_LENGTH)}`
}
