import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import type { ResolvedAddress, VettedUrl } from './url-policy.ts'

/** What one POST to an endpoint gave: a status (any, 2xx meaning delivered) or an error. */
export interface SendResult {
  status: number | null
  /** The first 1 KiB of the answer's body, as text. */
  bodyExcerpt: string | null
  error: string | null
  latencyMs: number
  /** No answer on a kept-alive connection the receiver may have closed meanwhile: worth one more try. */
  staleConnection?: boolean
}

export const EXCERPT_BYTES = 1024

/**
 * Kept-alive connections, one pool per origin and vetted address, so that a delivery does not
 * pay for a new connection each time; a pooled connection always goes to the address that was
 * checked for this delivery. Bounded; the oldest pool goes first.
 */
export class ConnectionPools {
  readonly #pools = new Map<string, HttpAgent>()
  constructor(private readonly max = 256) {}

  for(target: VettedUrl, pinned: ResolvedAddress, lookup: LookupFunction): HttpAgent {
    const key = `${target.url.protocol}//${target.url.host}|${pinned.address}`
    const found = this.#pools.get(key)
    if (found !== undefined) return found
    // Idle connections close after 4 s: before most servers' own keep-alive timeout (5 s in
    // Node), so a connection the receiver is closing is seldom picked for a delivery.
    const options = { keepAlive: true, maxSockets: 16, lookup, timeout: 4_000 }
    const agent = target.url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options)
    this.#pools.set(key, agent)
    if (this.#pools.size > this.max) {
      const [oldest] = this.#pools
      if (oldest !== undefined) {
        oldest[1].destroy()
        this.#pools.delete(oldest[0])
      }
    }
    return agent
  }

  close(): void {
    for (const agent of this.#pools.values()) agent.destroy()
    this.#pools.clear()
  }
}

/**
 * POSTs a signed event to a vetted URL, connecting only to the address the URL policy checked:
 * the `lookup` given to the socket answers with it instead of asking DNS again (TLS still
 * verifies the certificate against the host name). No redirects are followed (a 3xx is a
 * failure), so a receiver cannot bounce the request to an address that was never checked.
 */
export function sendWebhook(
  target: VettedUrl,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; userAgent: string; pools?: ConnectionPools },
): Promise<SendResult> {
  const pinned = target.addresses[0] as ResolvedAddress
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      ;(callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned])
    } else callback(null, pinned.address, pinned.family)
  }
  const started = performance.now()
  const request = target.url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    let settled = false
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return
      settled = true
      resolve({ ...result, latencyMs: Math.round(performance.now() - started) })
    }
    const req = request(
      target.url,
      {
        method: 'POST',
        lookup,
        // Without pools, a new connection per delivery.
        agent: options.pools?.for(target, pinned, lookup) ?? false,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': options.userAgent,
        },
        timeout: options.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(chunk)
          size += chunk.length
        })
        res.on('end', () => {
          const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8')
          finish({ status: res.statusCode ?? null, bodyExcerpt: excerpt, error: null })
        })
        res.on('error', (error) =>
          finish({ status: res.statusCode ?? null, bodyExcerpt: null, error: error.message }),
        )
      },
    )
    const deadline = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`))
    }, options.timeoutMs)
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`)))
    req.on('error', (error) =>
      finish({
        status: null,
        bodyExcerpt: null,
        error: error.message,
        staleConnection:
          req.reusedSocket && ['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? ''),
      }),
    )
    req.on('close', () => clearTimeout(deadline))
    req.end(body)
  })
}
