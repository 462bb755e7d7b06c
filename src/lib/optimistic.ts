import { setTimeout as sleep } from 'node:timers/promises'
import { ApiError } from '../errors/api-error.ts'

/** A parsed If-Match header (src/http/etag.ts reads it): `*`, or the versions it lists. */
export type IfMatch = { any: true } | { any: false; versions: number[] }

/** Throws 412 when the If-Match condition does not hold for the current version. */
export function assertIfMatch(ifMatch: IfMatch | undefined, currentVersion: number): void {
  if (ifMatch === undefined || ifMatch.any || ifMatch.versions.includes(currentVersion)) return
  throw new ApiError(
    'precondition_failed',
    `If-Match names version ${ifMatch.versions.map((v) => `"${v}"`).join(', ') || '(none)'} but the current version is "${currentVersion}"; fetch it again and re-apply your change.`,
    // The entity tag of the current version, as etagFor (src/http/etag.ts) writes it.
    { headers: { etag: `"${currentVersion}"` } },
  )
}

/**
 * Attempts before a write that keeps losing its race gives up with 409 concurrent_change. On
 * PostgreSQL an update is one short statement after its read (src/db/atomic-write.ts), so an
 * attempt is quick and losers come back fast: with 12 attempts, 200 PATCHes racing on one pet
 * through 4 instances got 161–171 through; with 20, 190–195 (test/pets/concurrent-writes.test.ts).
 */
export const MAX_WRITE_ATTEMPTS = 20
/** Backoff between attempts: random up to 4 ms, 8 ms, 16 ms … at most 50 ms (about 0.8 s in all). */
const BACKOFF_BASE_MS = 2
const BACKOFF_CAP_MS = 50

/**
 * Optimistic concurrency: read the current version, check the caller's If-Match against it, then
 * write only if the row is still at that version. When another writer got there first, an
 * If-Match request fails with 412 (its premise is gone); any other request starts over from the
 * new version after a short random pause (writers that collided do not collide again in step),
 * so no update is ever lost silently. A request without If-Match never gets 412: it asked for no
 * precondition. Past MAX_WRITE_ATTEMPTS it gets 409 concurrent_change, which is safe to retry.
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
    if (attempt >= MAX_WRITE_ATTEMPTS) {
      throw new ApiError(
        'concurrent_change',
        'Other requests kept changing this object while this one ran; nothing was changed. Retry the request.',
        { headers: { 'retry-after': '1' } },
      )
    }
    await sleep(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt))
  }
}
