import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * Reading and answering the raw Node request of a provider endpoint, which Fastify has not
 * parsed (provider-mount.ts): the body, the client's credentials, and RFC 6749 §5.2 errors.
 */

export const BODY_LIMIT = 56 * 1024

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  })
  res.end(JSON.stringify(body))
}

export function oauthError(
  res: ServerResponse,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    res,
    status,
    { error, error_description: description },
    status === 401 ? { 'www-authenticate': 'Basic realm="pet-service"', ...headers } : headers,
  )
}

/** The body as text, or undefined when it is larger than BODY_LIMIT. */
export async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > BODY_LIMIT) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Hands the (rewritten) body to the provider as if it were still unread: its body reader
 * (selective_body.js) iterates the request when `readable`, and checks Content-Length.
 */
export function replayBody(req: IncomingMessage, text: string): void {
  const body = Buffer.from(text)
  req.headers['content-length'] = String(body.length)
  Object.defineProperty(req, 'readable', { value: true, configurable: true })
  Object.defineProperty(req, 'iterator', {
    configurable: true,
    value: async function* () {
      yield body
    },
  })
}

export interface ClientCredentials {
  clientId: string | undefined
  secret: string | undefined
}

/** The client's id and secret, from HTTP Basic (RFC 6749 §2.3.1) or the form body. */
export function clientCredentials(req: IncomingMessage, params: Record<string, unknown>): ClientCredentials {
  const header = req.headers.authorization
  if (header !== undefined && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) return { clientId: undefined, secret: undefined }
    // RFC 6749 §2.3.1: both halves are form-urlencoded before base64.
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replaceAll('+', ' '))
      } catch {
        return s
      }
    }
    return {
      clientId: decode(decoded.slice(0, colon)),
      secret: decode(decoded.slice(colon + 1)),
    }
  }
  const clientId = typeof params.client_id === 'string' ? params.client_id : undefined
  const secret = typeof params.client_secret === 'string' ? params.client_secret : undefined
  return { clientId, secret }
}
