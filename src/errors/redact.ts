/**
 * What an error message may show of a credential or of an opaque value a client sent (an
 * Idempotency-Key): its public prefix (`pet_sk_`) and, when it is long enough that four
 * characters give nothing away, its last four. Never the rest: error bodies end up in logs,
 * proxies and bug reports.
 */
export function redactSecret(value: string): string {
  const prefix = /^[a-z]{2,10}_[a-z]{2,10}_/.exec(value)?.[0] ?? ''
  const rest = value.slice(prefix.length)
  return rest.length >= 16 ? `${prefix}…${rest.slice(-4)}` : `${prefix}…`
}

/** A header value quoted in an error message: JSON-quoted and cut at `max` characters. */
export function quoteHeaderValue(value: string, max = 100): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
}
