import { appendFile } from 'node:fs/promises'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { core, type tracing } from '@opentelemetry/sdk-node'

/**
 * Writes spans to a file (TRACES_FILE), one JSON line each, for reading traces on one's own
 * machine apart from the log lines: `jq 'select(.trace_id == "…")' traces.jsonl` shows one
 * request, its database spans beside it. Loaded with the SDK only (src/observability/tracing.ts).
 */
export class FileSpanExporter implements tracing.SpanExporter {
  #writing: Promise<unknown> = Promise.resolve()

  constructor(readonly path: string) {}

  export(spans: tracing.ReadableSpan[], done: (result: core.ExportResult) => void): void {
    const lines = spans.map((span) => `${JSON.stringify(spanLine(span))}\n`).join('')
    this.#writing = this.#writing
      .then(() => appendFile(this.path, lines))
      .then(
        () => done({ code: core.ExportResultCode.SUCCESS }),
        (error: unknown) =>
          done({
            code: core.ExportResultCode.FAILED,
            error: error instanceof Error ? error : new Error(String(error)),
          }),
      )
  }

  async forceFlush(): Promise<void> {
    await this.#writing
  }

  async shutdown(): Promise<void> {
    await this.#writing
  }
}

function spanLine(span: tracing.ReadableSpan): Record<string, unknown> {
  const { traceId, spanId } = span.spanContext()
  return {
    time: new Date(core.hrTimeToMilliseconds(span.startTime)).toISOString(),
    trace_id: traceId,
    span_id: spanId,
    ...(span.parentSpanContext === undefined ? {} : { parent_span_id: span.parentSpanContext.spanId }),
    name: span.name,
    kind: SpanKind[span.kind].toLowerCase(),
    duration_ms: Math.round(core.hrTimeToMicroseconds(span.duration)) / 1000,
    ...(span.status.code === SpanStatusCode.ERROR ? { status: 'error' } : {}),
    attributes: span.attributes,
  }
}
