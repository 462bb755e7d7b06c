import { ApiError } from '../errors/api-error.ts'
import { assertIfMatch, type IfMatch } from '../http/etag.ts'

const MAX_ATTEMPTS = 5

/**
 * Optimistic concurrency: read the current version, check the caller's If-Match against it, then
 * write only if the row is still at that version. When another writer got there first, an
 * If-Match request fails with 412 (its premise is gone); any other request starts over from the
 * new version, so no update is ever lost silently.
 */
export async function writeAtCurrentVersion<T extends { version: number }, R>(options: {
  load: () => Promise<T | undefined>
  missing: () => ApiError
  ifMatch: IfMatch | undefined
  /** Resolves to undefined when the version moved underneath. */
  write: (current: T) => Promise<R | undefined>
}): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const current = await options.load()
    if (current === undefined) throw options.missing()
    assertIfMatch(options.ifMatch, current.version)
    const result = await options.write(current)
    if (result !== undefined) return result
    if (options.ifMatch !== undefined && !options.ifMatch.any) {
      const latest = await options.load()
      if (latest === undefined) throw options.missing()
      assertIfMatch(options.ifMatch, latest.version)
    }
    if (attempt >= MAX_ATTEMPTS) {
      throw new ApiError('precondition_failed', 'The object kept changing while this request ran; retry it.')
    }
  }
}
