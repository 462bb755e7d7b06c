import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SeenRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
}

/**
 * What the proxy does with the n-th request (0-based): forward it to the real service, answer
 * by itself, forward it but hold the answer back `delayMs`, or drop the connection.
 */
export type Behaviour =
  | { kind: 'forward'; delayMs?: number }
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'reset' }

/**
 * A real HTTP server in front of the service that misbehaves on purpose: for retry and
 * timeout tests. It records every request it receives.
 */
export async function startProxy(
  target: string,
  behaviour: (n: number, request: SeenRequest) => Behaviour,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }
      const n = seen.push(request) - 1
      const plan = behaviour(n, request)
      if (plan.kind === 'reset') {
        req.socket.destroy()
        return
      }
      if (plan.kind === 'answer') {
        const body = plan.body === undefined ? '' : JSON.stringify(plan.body)
        res.writeHead(plan.status, {
          ...(body === '' ? {} : { 'content-type': 'application/problem+json' }),
          ...plan.headers,
        })
        res.end(body)
        return
      }
      const upstream = httpRequest(
        new URL(request.url, target),
        { method: request.method, headers: { ...req.headers, host: new URL(target).host } },
        (up) => {
          const parts: Buffer[] = []
          up.on('data', (c: Buffer) => parts.push(c))
          up.on('end', () => {
            const send = () => {
              if (res.destroyed) return
              res.writeHead(up.statusCode ?? 502, up.headers)
              res.end(Buffer.concat(parts))
            }
            if (plan.delayMs === undefined) send()
            else setTimeout(send, plan.delayMs)
          })
        },
      )
      upstream.on('error', () => res.destroy())
      upstream.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export const serverError = (status = 503): Behaviour => ({
  kind: 'answer',
  status,
  body: {
    type: '/problems/service_unavailable',
    title: 'Service unavailable',
    status,
    detail: 'try again',
    code: 'service_unavailable',
    request_id: 'req_proxy',
  },
})
