import cluster, { type Worker } from 'node:cluster'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AggregatorRegistry, type Registry } from 'prom-client'
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
  const collect = async () => {
    const [own, app] = await Promise.all([nodeFigures.metrics(), registry.metrics()])
    return own + app
  }
  return listen(collect, registry.contentType, options)
}

/**
 * In a worker of `serve --workers N`: answers the primary's requests for this process's
 * figures and the app's (prom-client's cluster messages), instead of listening on a port.
 */
export function answerClusterMetrics(registry: Registry): void {
  // Constructing one installs prom-client's message listener in this worker.
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries([processMetrics(), registry])
}

/** prom-client's cluster messages, which its listener in each worker answers. */
const METRICS_REQUEST = 'prom-client:getMetricsReq'
const METRICS_RESPONSE = 'prom-client:getMetricsRes'
const WORKER_ANSWER_MS = 5000

interface MetricsResponse {
  type: typeof METRICS_RESPONSE
  requestId: string
  /** One registry's getMetricsAsJSON() per registry the worker answers for. */
  metrics?: object[]
  error?: string
}

/**
 * In the primary of `serve --workers N`: the one `/metrics` listener, answering every worker's
 * figures added up (counters and histograms summed, by prom-client's AggregatorRegistry). Only
 * the workers `ready()` names are asked (those listening: one still starting has no answer yet,
 * and prom-client's own clusterMetrics() would wait for it and fail the scrape).
 */
export async function listenForClusterMetrics(
  options: { host: string; port: number },
  ready: () => Worker[],
): Promise<MetricsServer> {
  let sent = 0
  const collect = () =>
    new Promise<string>((resolve, reject) => {
      const workers = ready()
      if (workers.length === 0) {
        resolve('')
        return
      }
      const requestId = `pet-service-${++sent}`
      const answers: object[] = []
      let pending = workers.length
      const finish = (error?: Error) => {
        clearTimeout(timer)
        cluster.off('message', onMessage)
        if (error !== undefined) reject(error)
        else AggregatorRegistry.aggregate(answers).metrics().then(resolve, reject)
      }
      const onMessage = (_worker: Worker, message: MetricsResponse) => {
        if (message?.type !== METRICS_RESPONSE || message.requestId !== requestId) return
        if (message.error !== undefined) finish(new Error(message.error))
        else {
          answers.push(...(message.metrics ?? []))
          if (--pending === 0) finish()
        }
      }
      const timer = setTimeout(
        () => finish(new Error(`${pending} workers did not answer within ${WORKER_ANSWER_MS} ms`)),
        WORKER_ANSWER_MS,
      )
      cluster.on('message', onMessage)
      for (const worker of workers) worker.send({ type: METRICS_REQUEST, requestId })
    })
  return listen(collect, AggregatorRegistry.PROMETHEUS_CONTENT_TYPE, options)
}

async function listen(
  collect: () => Promise<string>,
  contentType: string,
  options: { host: string; port: number },
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      response.end('Not found: metrics are at GET /metrics.\n')
      return
    }
    collect().then(
      (text) => {
        response.writeHead(200, { 'content-type': contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
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
