import { context, propagation, type Tracer, trace } from '@opentelemetry/api'
import type { TracingConfig } from '../config/config.ts'

export interface Tracing {
  tracer: Tracer
  /** Sends the spans still buffered, then stops the SDK and unregisters it. */
  shutdown(): Promise<void>
}

/**
 * Starts the OpenTelemetry SDK when the `OTEL_*` variables ask for tracing (see
 * `TracingConfig`), or returns null. The SDK is loaded only then: with tracing off the service
 * installs no hooks and no wrappers, so it costs nothing.
 *
 * The SDK reads the environment itself, by the specification's rules (exporter, protocol,
 * endpoint, headers, sampler, propagators, resource attributes), unless TRACES_FILE names a file
 * to write the spans to instead (src/observability/span-file.ts). It exports traces only: the
 * service's metrics are Prometheus's (`METRICS_PORT`) and its logs are JSON lines on stdout.
 */
export async function startTracing(
  config: TracingConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | null> {
  if (!config.enabled) return null
  const { NodeSDK, tracing } = await import('@opentelemetry/sdk-node')
  // Our default name, unless the operator named the service in either standard variable.
  const named =
    env.OTEL_SERVICE_NAME !== undefined || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
  const file =
    config.file === undefined
      ? {}
      : {
          spanProcessors: [
            new tracing.BatchSpanProcessor(
              new (await import('./span-file.ts')).FileSpanExporter(config.file),
            ),
          ],
        }
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: config.serviceName }),
    ...file,
    metricReaders: [],
    logRecordProcessors: [],
  })
  sdk.start()
  return {
    tracer: trace.getTracer('pet-service'),
    async shutdown() {
      await sdk.shutdown()
      // The API keeps its providers on globalThis: let a later start in this process register anew.
      trace.disable()
      context.disable()
      propagation.disable()
    },
  }
}
