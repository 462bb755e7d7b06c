import { Counter, Gauge, type Registry } from 'prom-client'
import type { RequestLogWriter } from './request-log-writer.ts'

/** The request logs' Prometheus metrics, read from the writer when Prometheus scrapes. */
export function registerRequestLogMetrics(registry: Registry, writer: RequestLogWriter): void {
  let dropped = 0
  new Counter({
    name: 'request_logs_dropped_total',
    help: 'Request log entries not stored: the buffer was full while the database was slow, or an insert failed.',
    registers: [registry],
    collect() {
      this.inc(writer.dropped - dropped)
      dropped = writer.dropped
    },
  })
  let written = 0
  new Counter({
    name: 'request_logs_written_total',
    help: 'Request log entries stored.',
    registers: [registry],
    collect() {
      this.inc(writer.written - written)
      written = writer.written
    },
  })
  new Gauge({
    name: 'request_logs_buffered',
    help: 'Request log entries waiting to be written.',
    registers: [registry],
    collect() {
      this.set(writer.buffered)
    },
  })
}
