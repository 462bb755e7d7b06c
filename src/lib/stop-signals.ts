/**
 * A repeat of a signal this soon after the first of its kind is the same request to stop. A
 * terminal's Ctrl-C reaches every process of its group, and `npm start` passes the signal it
 * gets on to the service, which so receives the same signal twice at once.
 */
export const SAME_REQUEST_MS = 1000

export interface StopRequests {
  /** The first request: stop gracefully. */
  stop(signal: NodeJS.Signals): void
  /** A later one: stop now. */
  force(signal: NodeJS.Signals): void
}

/**
 * Turns `signals` into requests to stop; answers the function that removes the handlers. Only
 * a signal repeated after SAME_REQUEST_MS forces the stop: one of another kind (the SIGTERM a
 * supervisor sends with a terminal's SIGINT) joins the request under way.
 */
export function onStopSignals(signals: readonly NodeJS.Signals[], requests: StopRequests): () => void {
  const firstOfKind = new Map<NodeJS.Signals, number>()
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now()
    const first = firstOfKind.get(signal)
    if (first === undefined) {
      firstOfKind.set(signal, now)
      if (firstOfKind.size === 1) requests.stop(signal)
    } else if (now - first > SAME_REQUEST_MS) {
      requests.force(signal)
    }
  }
  for (const signal of signals) process.on(signal, onSignal)
  return () => {
    for (const signal of signals) process.removeListener(signal, onSignal)
  }
}
