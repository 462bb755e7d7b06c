/** Timestamps are stored and returned as ISO-8601 UTC with milliseconds: sortable as text. */
export function nowIso(now = Date.now()): string {
  return new Date(now).toISOString()
}
