import { ApiError } from '../errors/api-error.ts'
import { quoteHeaderValue } from '../lib/redact.ts'

/** Responses carry the object's version as a strong entity tag (RFC 9110 §8.8.3). */
export function etagFor(version: number): string {
  return `"${version}"`
}

/** A parsed If-Match header: `*`, or the versions it lists. */
export type IfMatch = { any: true } | { any: false; versions: number[] }

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

/** Throws 412 when the If-Match condition does not hold for the current version. */
export function assertIfMatch(ifMatch: IfMatch | undefined, currentVersion: number): void {
  if (ifMatch === undefined || ifMatch.any || ifMatch.versions.includes(currentVersion)) return
  throw new ApiError(
    'precondition_failed',
    `If-Match names version ${ifMatch.versions.map((v) => `"${v}"`).join(', ') || '(none)'} but the current version is "${currentVersion}"; fetch it again and re-apply your change.`,
    { headers: { etag: etagFor(currentVersion) } },
  )
}
