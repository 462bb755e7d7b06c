import { hash } from 'node:crypto'

/** One-shot (crypto.hash, Node 20.12): no Hash object per call, unlike createHash(). */
export function sha256Hex(input: string): string {
  return hash('sha256', input, 'hex')
}
