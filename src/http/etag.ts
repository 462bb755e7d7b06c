import { ApiError } from '../errors/api-error.ts'
import { quoteHeaderValue } from '../errors/redact.ts'
import type { IfMatch } from '../lib/optimistic.ts'

/** Responses carry the object's version as a strong entity tag (RFC 9110 §8.8.3). */
export function etagFor(version: number): string {
  return `"${version}"`
}

export type { IfMatch }

export function parseIfMatch(header: string | string[] | undefined): IfMatch | undefined {
  if (header === undefined) return undefined
  const text = Array.isArray(header) ? header.join(',') : header
  if (text.trim() === '*') return { any: true }
  const versions: number[] = []
  for (const part of text.split(',')) {
    const tag = part.trim()
    // If-Match compares strongly: a weak tag never matches (RFC 9110 §13.1.1).
    const match = /^"(\d{1,15})"$/.exec(tag)
    if (match) versions.push(Number(match[1]))
    else if (!/^W\/"[^"]*"$/.test(tag) && !/^"[^"]*"$/.test(tag)) {
      throw new ApiError(
        'parameter_invalid',
        `If-Match must list entity tags such as "3" (from an ETag header), not ${quoteHeaderValue(tag, 40)}.`,
        {
          param: 'If-Match',
        },
      )
    }
  }
  return { any: false, versions }
}
