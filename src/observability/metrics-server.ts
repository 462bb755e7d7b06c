import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'
import { processMetrics } from './process-metrics.ts'

export interface MetricsServer {
  /** http://HOST:PORT/metrics */
  url: string
  close(): Promise<void>
}

/**
 * The Prometheus scrape endpoint, `GET /metrics`, on a listener of its own (METRICS_HOST,
 * METRICS_PORT): the API's port never serves it, and by default only the machine itself can
 * reach it. It answers the app's metrics and the process's.
 */
export async function listenForMetrics(
  registry: Registry,
  options: { host: string; port: number },
): Promise<MetricsServer> {
  const nodeFigures = processMetrics()
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      response.end('Not found: metrics are at GET /metrics.\n')
      return
    }
    Promise.all([nodeFigures.metrics(), registry.metrics()]).then(
      ([own, app]) => {
        response.writeHead(200, { 'content-type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : own + app)
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        response.end(`Could not collect metrics: ${error instanceof Error ? error.message : String(error)}\n`)
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { address, port } = server.address() as AddressInfo
  const host = address.includes(':') ? `[${address}]` : address
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
