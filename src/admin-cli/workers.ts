import cluster, { type Worker } from 'node:cluster'
import { availableParallelism } from 'node:os'
import type { Config } from '../config/config.ts'
import { WorkerConnections } from '../http/worker-connections.ts'
import { onStopSignals } from '../lib/stop-signals.ts'
import { listenForClusterMetrics, type MetricsServer } from '../observability/metrics-server.ts'
import { listenError, prepareDatabase, startServer, type WorkerRole } from '../server.ts'

/** The environment variable that tells a forked process which slot it fills. */
const SLOT_ENV = 'PET_SERVICE_WORKER_SLOT'

/** A worker that dies this soon after its start counts as crashing. */
const CRASH_WINDOW_MS = 60_000
/** This many crashes in a row (each within the window of the previous start) and we give up. */
const MAX_CRASHES = 5
const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 10_000

/** `auto`: one worker per core the process may use. */
export function workerCount(value: number | 'auto'): number {
  return value === 'auto' ? availableParallelism() : value
}

/** True in a process forked by `serve --workers N`. */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env[SLOT_ENV] !== undefined
}

/** In a forked process: the normal server, in the role the primary gave it. */
export async function startWorker(config: Config): Promise<void> {
  const slot = Number(process.env[SLOT_ENV])
  const role: WorkerRole = {
    slot,
    // SQLite: one process per file claims webhook deliveries and purges; PostgreSQL: all.
    backgroundJobs: slot === 1 || !config.databaseUrl.startsWith('sqlite:'),
  }
  try {
    await startServer(config, role)
  } catch (error) {
    // The channel to the primary would keep this process alive: exit, and let the primary
    // decide whether to start another.
    logLine(
      'error',
      `worker ${slot} could not start: ${error instanceof Error ? error.message : String(error)}`,
      {
        role: 'worker',
        worker: slot,
      },
    )
    process.exit(1)
  }
}

/** One JSON line in the shape of the workers' pino lines, so one log pipeline reads both. */
function logLine(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  const levels = { info: 30, warn: 40, error: 50 }
  const line = { level: levels[level], time: Date.now(), pid: process.pid, role: 'primary', ...fields, msg }
  process.stdout.write(`${JSON.stringify(line)}\n`)
}

interface Slot {
  worker: Worker | undefined
  startedAt: number
  /** Crashes since the slot last ran for CRASH_WINDOW_MS. */
  crashes: number
  restart: NodeJS.Timeout | undefined
}

/**
 * The primary of `serve --workers N`: prepares the database once, listens on the port and forks
 * N workers that each run the normal server on the connections it hands them in turn (the port
 * stays open while workers are replaced: src/http/worker-connections.ts), serves the
 * workers' metrics added up on METRICS_PORT, replaces a worker that dies (backing off; after
 * MAX_CRASHES quick deaths in a row it stops everything and exits 1), and on SIGTERM or SIGINT
 * passes one SIGTERM to each worker (each drains as a single process does) and exits once all
 * have: 0 if every worker exited 0.
 */
export async function runPrimary(config: Config, count: number): Promise<void> {
  await prepareDatabase(config, (message) => logLine('info', message))
  const slots = new Map<number, Slot>()
  const connections = await WorkerConnections.listen(config.port, config.host).catch((error: unknown) => {
    throw listenError(config, error)
  })
  logLine('info', `listening at http://${config.host}:${connections.port}`)
  let metrics: MetricsServer | undefined
  if (config.metricsPort !== 0) {
    try {
      metrics = await listenForClusterMetrics({ host: config.metricsHost, port: config.metricsPort }, () =>
        connections.ready(),
      )
    } catch (error) {
      connections.close()
      const reason = error instanceof Error ? error.message : String(error)
      throw new Error(
        `The metrics listener could not start on ${config.metricsHost}:${config.metricsPort} (${reason}). Set METRICS_PORT to a free port, or to 0 to turn metrics off.`,
      )
    }
  }
  let stopping = false
  let failed = false
  let resolveDone: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve
  })

  const fork = (slot: number) => {
    const state = slots.get(slot)!
    state.restart = undefined
    state.startedAt = Date.now()
    const worker = cluster.fork({ [SLOT_ENV]: String(slot) })
    state.worker = worker
    // Before `connections` hears of the exit: onExit asks whether the worker was serving.
    worker.on('exit', (code, signal) => onExit(slot, worker, code, signal))
    connections.add(worker)
  }

  const allExited = () => [...slots.values()].every((s) => s.worker === undefined)

  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true
    connections.stop()
    for (const state of slots.values()) {
      clearTimeout(state.restart)
      state.worker?.process.kill(signal)
    }
    if (allExited()) resolveDone()
  }

  const onExit = (slot: number, worker: Worker, code: number | null, signal: string | null) => {
    const state = slots.get(slot)!
    const wasListening = connections.isReady(worker)
    if (state.worker === worker) state.worker = undefined
    if (stopping) {
      // A worker still starting has no handler for our SIGTERM yet, and dies of it: it had
      // nothing to drain, so that is a clean stop too.
      const stoppedWhileStarting = signal === 'SIGTERM' && !wasListening
      if (code !== 0 && !stoppedWhileStarting) failed = true
      if (allExited()) resolveDone()
      return
    }
    const ranFor = Date.now() - state.startedAt
    state.crashes = ranFor >= CRASH_WINDOW_MS ? 1 : state.crashes + 1
    if (state.crashes >= MAX_CRASHES) {
      logLine('error', `worker ${slot} died ${state.crashes} times in a row; stopping`, {
        worker: slot,
        code,
        signal,
      })
      failed = true
      stopAll('SIGTERM')
      return
    }
    const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (state.crashes - 1))
    logLine('warn', `worker ${slot} exited; starting another in ${backoff} ms`, {
      worker: slot,
      worker_pid: worker.process.pid,
      code,
      signal,
    })
    state.restart = setTimeout(() => fork(slot), backoff)
  }

  for (let slot = 1; slot <= count; slot++) {
    slots.set(slot, { worker: undefined, startedAt: 0, crashes: 0, restart: undefined })
    fork(slot)
  }
  // A Ctrl-C under `npm start` (SIGINT, and npm's signal) is one request (src/lib/stop-signals.ts);
  // a signal repeated later reaches each worker as its second too: it exits without waiting.
  onStopSignals(['SIGTERM', 'SIGINT'], {
    stop(signal) {
      logLine('info', 'stopping the workers', { signal })
      stopAll('SIGTERM')
    },
    force(signal) {
      logLine('info', 'stopping the workers now', { signal })
      stopAll('SIGTERM')
    },
  })
  logLine('info', `started ${count} workers`, { workers: count, metrics: metrics?.url ?? 'off' })
  await done
  connections.close()
  await metrics?.close()
  logLine(failed ? 'error' : 'info', 'all workers have exited')
  process.exitCode = failed ? 1 : 0
}
