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

/**
 * A request URL as logs may show it: the values of query parameters named `password` (the
 * Petstore's `GET /v2/user/login` sends one in clear text) replaced by `***`.
 */
export function urlForLogs(url: string): string {
  const query = url.indexOf('?')
  if (query === -1 || !/password/i.test(url.slice(query))) return url
  const pairs = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      const name = equals === -1 ? pair : pair.slice(0, equals)
      let decoded = name
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '))
      } catch {}
      return decoded.trim().toLowerCase() === 'password' ? `${name}=***` : pair
    })
  return `${url.slice(0, query)}?${pairs.join('&')}`
}
