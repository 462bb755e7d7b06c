import type { IncomingMessage } from 'node:http'
import { ApiError } from '../errors/api-error.ts'

/**
 * The request's one Authorization value, or undefined without one. A request carries one
 * credential (RFC 9110 §11.6.2); a client that sets it twice sends two header lines (Node keeps
 * the first) or joins the two values with a comma in one line (swagger-client does when both its
 * `authorizations` and a request interceptor set it). Either is refused with a message that says
 * so, rather than read as a malformed credential or as the first of two (RFC 6750 §3.1 calls a
 * request that repeats a parameter `invalid_request`). A Basic or Bearer credential never holds
 * a comma (its token68 syntax has none), so a comma after one starts another value.
 */
export function authorizationHeader(request: Pick<IncomingMessage, 'rawHeaders'>): string | undefined {
  const lines: string[] = []
  const raw = request.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]
    // Most names differ in length: compared without lower-casing every header name.
    if (name?.length === 13 && name.toLowerCase() === 'authorization') lines.push(raw[i + 1] ?? '')
  }
  // One line without a comma holds one credential at most: nothing to count (the usual case).
  if (lines.length <= 1 && !lines[0]?.includes(',')) return lines[0]
  const schemes = lines.flatMap(credentialSchemes)
  if (schemes.length > 1) {
    throw new ApiError(
      'invalid_request',
      `The request carries Authorization ${schemes.length} values (${schemes.join(', ')}): send it once. A client configured with the credential twice, say as its authentication setting and as a default header, sends both (see "Sending the token" in docs/petstore-differences.md).`,
    )
  }
  return lines[0]
}

/** The scheme of each credential in one header line, without the credentials themselves. */
function credentialSchemes(line: string): string[] {
  const values = /^\s*(basic|bearer)\s/i.test(line) ? line.split(',') : [line]
  return values
    .filter((value) => value.trim() !== '')
    .map((value) => {
      const scheme = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]{0,19})(\s|$)/.exec(value)?.[1]
      return scheme === undefined ? 'unknown' : scheme[0]!.toUpperCase() + scheme.slice(1).toLowerCase()
    })
}
