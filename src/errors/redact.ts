/**
 * What an error message may show of a credential or of an opaque value a client sent (an
 * Idempotency-Key): its public prefix (`pet_sk_`) and, when it is long enough that four
 * characters give nothing away, its last four. Never the rest: error bodies end up in logs,
 * proxies and bug reports.
 */
export function redactSecret(value: string): string {
  const prefix = /^[a-z]{2,10}_[a-z]{2,10}_(?:test_)?/.exec(value)?.[0] ?? ''
  const rest = value.slice(prefix.length)
  return rest.length >= 16 ? `${prefix}…${rest.slice(-4)}` : `${prefix}…`
}

/** A header value quoted in an error message: JSON-quoted and cut at `max` characters. */
export function quoteHeaderValue(value: string, max = 100): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
}

/**
 * Query parameters whose values are credentials: the Petstore login's `password`, and the OAuth
 * and bearer parameters a client may put in a URL whether or not the route reads them there
 * (RFC 6750 §2.3 `access_token`, a client secret, a code or a token sent to the wrong place).
 */
export const SECRET_QUERY_PARAMETERS: readonly string[] = [
  'password',
  'client_secret',
  'client_assertion',
  'access_token',
  'refresh_token',
  'token',
  'code',
  'code_verifier',
  'api_key',
]
const SECRET_NAMES = new Set(SECRET_QUERY_PARAMETERS)

/**
 * A request URL as logs may show it: the values of the query parameters above replaced by `***`.
 * The query is found as the router finds it (from the first `?` or `#`: find-my-way takes either),
 * and each name is judged decoded, as the query parser decodes it (`%70assword`, `pass%77ord`,
 * `+` as a space), in any case and with spaces around it; a name encoded twice is decoded again.
 */
export function urlForLogs(url: string): string {
  const start = url.search(/[?#]/)
  if (start === -1) return url
  const pairs = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      const name = equals === -1 ? pair : pair.slice(0, equals)
      return SECRET_NAMES.has(decodedName(name)) ? `${name}=***` : pair
    })
  return `${url.slice(0, start + 1)}${pairs.join('&')}`
}

/** A parameter name as the query parser reads it, lower-cased and trimmed; decoded until it stays put. */
function decodedName(name: string): string {
  let decoded = name.replaceAll('+', ' ')
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    try {
      decoded = decodeURIComponent(decoded)
    } catch {
      break
    }
  }
  return decoded.trim().toLowerCase()
}
