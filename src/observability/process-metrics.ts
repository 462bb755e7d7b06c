import { collectDefaultMetrics, Registry } from 'prom-client'

let registry: Registry | undefined

/**
 * Node's own figures — heap, event-loop lag, garbage collection, CPU, memory, open handles —
 * kept once per process: there is one heap and one event loop however many apps run in it, and
 * prom-client's collectors (an event-loop delay monitor, a GC observer) are never stopped, so
 * starting them per app would pile them up. Prometheus's default registry is left untouched.
 */
export function processMetrics(): Registry {
  if (registry === undefined) {
    registry = new Registry()
    collectDefaultMetrics({ register: registry })
  }
  return registry
}
