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
 * The one list of names whose values are credentials, wherever they appear: query parameters,
 * form and JSON body fields, headers. The server's own log (`urlForLogs`) and the account's
 * request logs (src/request-logs/) both redact by it. It holds the Petstore login's `password`,
 * the OAuth and bearer parameters a client may send whether or not the route reads them there
 * (RFC 6750 §2.3 `access_token`, a client secret, a code or a token sent to the wrong place), the
 * Petstore's `api_key`, webhook signing secrets (`secret`), and the credential headers.
 * `isSecretName` also treats as secret any name that contains `password`, `secret`, `token` or
 * `api_key`/`apikey`, so `new_password` or `x-api-key` need no entry of their own.
 */
export const SECRET_NAMES: readonly string[] = [
  'password',
  'client_secret',
  'client_assertion',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'code',
  'code_verifier',
  'api_key',
  'secret',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
]

/** The query parameters the server log hides: the same list (kept under this name for its readers). */
export const SECRET_QUERY_PARAMETERS: readonly string[] = SECRET_NAMES
const SECRET_NAME_SET = new Set(SECRET_NAMES)
const SECRET_NAME_PARTS = /password|secret|token|api[-_]?key/

/** Whether a name (of a query parameter, a body field or a header) holds a credential, judged decoded. */
export function isSecretName(name: string): boolean {
  const decoded = decodedName(name)
  return SECRET_NAME_SET.has(decoded) || SECRET_NAME_PARTS.test(decoded)
}

/**
 * Credentials recognised by their shape wherever they are (a key pasted into a pet's name, a
 * token in an error message): API keys and client secrets (`pet_sk_`, `pet_cs_`, and the other
 * secret `pet_xx_` kinds; client ids, `pet_ci_`, are not secrets), webhook secrets (`whsec_`) and JWTs.
 */
const SECRET_VALUES =
  /\b(?:pet_(?!ci_)[a-z]{2}_[A-Za-z0-9_]+|whsec_[A-Za-z0-9+/=_-]+|eyJ[\w-]*\.[\w-]+\.[\w-]+)/g

/** A text with every credential recognised by its shape replaced by `***`. */
export function redactSecretValues(text: string): string {
  return text.replace(SECRET_VALUES, '***')
}

/**
 * A parsed body (JSON or form fields) or a header set as a stored log may keep it: the value of
 * every secret name replaced by `***`, at any depth, and credentials recognised by their shape
 * removed from the other strings.
 */
export function redactFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecretValues(value)
  if (value === null || typeof value !== 'object') return value
  if (depth > 32) return '***'
  if (Array.isArray(value)) return value.map((item) => redactFields(item, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(value)) {
    // defineProperty: a `__proto__` field stays a field, never the copy's prototype.
    Object.defineProperty(out, redactSecretValues(name), {
      value: isSecretName(name) ? '***' : redactFields(field, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

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
      return isSecretName(name) ? `${name}=***` : pair
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
