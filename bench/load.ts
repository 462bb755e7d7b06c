import autocannon, { type Request, type Result } from 'autocannon'
import { cpuTimeUs, RssMonitor } from './processes.ts'

export const CONNECTIONS = 50

/** One case's load: a request generator against a server. */
export interface LoadSpec {
  url: string
  /** Requests autocannon cycles through; use setupRequest for per-request variation. */
  requests: Request[]
  /** Process whose peak RSS is measured while the load runs. */
  pid: number
  /**
   * A cheap GET answered only once the server has worked off what it already received: a slow
   * server (json-server) keeps processing requests autocannon abandoned at the end of a round,
   * which would otherwise steal CPU from the next measurement.
   */
  drainPath: string
  /** Requests per second across all connections, for a load below saturation; as fast as it answers by default. */
  overallRate?: number
  /**
   * The database server's main process on this machine (PostgreSQL's postmaster), whose process
   * tree's CPU time is measured per request too: the other half of a create's cost.
   */
  databasePid?: number
}

export interface RoundResult {
  rps: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Socket errors + timeouts + non-2xx answers. */
  errors: number
  statusCodes: Record<string, number>
  /** The bare server's req/s in the round run just before this one. */
  bareRps: number
  ratio: number
  /**
   * CPU time the server process spent per answered request (user + system), and the same for
   * the bare server: less sensitive than req/s to what else the machine is doing.
   */
  cpuUsPerRequest: number
  bareCpuUsPerRequest: number
  /** The database server's CPU time per answered request, when LoadSpec.databasePid is given. */
  databaseCpuUsPerRequest?: number
}

export interface CaseMeasurement {
  rounds: RoundResult[]
  /** Medians over the rounds. */
  rps: number
  p50Ms: number
  p99Ms: number
  bareRps: number
  /** Median of the per-round ratios to the bare server. */
  ratio: number
  cpuUsPerRequest: number
  bareCpuUsPerRequest: number
  databaseCpuUsPerRequest?: number
  /** Sum over the rounds (the warm-up excluded). */
  errors: number
  statusCodes: Record<string, number>
  peakRssBytes: number
}

export interface Timing {
  warmupSeconds: number
  seconds: number
  bareSeconds: number
  rounds: number
}

/**
 * Latencies at 10 µs resolution up to 10 s (autocannon's own histogram counts whole
 * milliseconds, too coarse for sub-millisecond medians).
 */
class LatencyHistogram {
  readonly #buckets = new Uint32Array(1_000_001)
  #count = 0

  record(ms: number): void {
    const index = Math.min(Math.round(ms * 100), this.#buckets.length - 1)
    this.#buckets[index] = (this.#buckets[index] ?? 0) + 1
    this.#count++
  }

  percentile(p: number): number {
    if (this.#count === 0) return 0
    const rank = Math.ceil((p / 100) * this.#count)
    let seen = 0
    for (let i = 0; i < this.#buckets.length; i++) {
      seen += this.#buckets[i] ?? 0
      if (seen >= rank) return i / 100
    }
    return (this.#buckets.length - 1) / 100
  }
}

async function drain(spec: LoadSpec): Promise<void> {
  const response = await fetch(spec.url + spec.drainPath, { signal: AbortSignal.timeout(120_000) })
  await response.arrayBuffer()
}

async function fire(spec: LoadSpec, seconds: number, latencies?: LatencyHistogram): Promise<Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      // json-server at 50k pets answers 50 waiting connections about every 10 s: a shorter
      // timeout would count the peer's queue as errors.
      {
        url: spec.url,
        connections: CONNECTIONS,
        duration: seconds,
        timeout: 60,
        requests: spec.requests,
        ...(spec.overallRate === undefined ? {} : { overallRate: spec.overallRate }),
      },
      (error, result) => (error === null ? resolve(result) : reject(error)),
    )
    if (latencies !== undefined) {
      instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) =>
        latencies.record(ms),
      )
    }
  })
}

export function median(values: number[]): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * A warm-up (not counted), then `rounds` fixed-length measurements at 50 connections, each
 * right after a round against the bare server: the machine is shared and its speed drifts,
 * so each round's ratio compares two measurements taken moments apart.
 */
/** Called just before and just after each measured round's load (not the bare round's). */
export interface RoundHooks {
  beforeLoad?(): Promise<void>
  afterLoad?(): Promise<void>
}

export async function measure(
  spec: LoadSpec,
  timing: Timing,
  bare?: LoadSpec,
  hooks: RoundHooks = {},
): Promise<CaseMeasurement> {
  if (timing.warmupSeconds > 0) {
    await fire(spec, timing.warmupSeconds)
    await drain(spec)
  }
  const rss = new RssMonitor(spec.pid)
  rss.start()
  const rounds: RoundResult[] = []
  const statusCodes: Record<string, number> = {}
  for (let i = 0; i < timing.rounds; i++) {
    const bareCpuBefore = bare === undefined ? 0 : cpuTimeUs(bare.pid)
    const reference = bare === undefined ? undefined : await fire(bare, timing.bareSeconds)
    const bareRps = reference === undefined ? 0 : countAll(reference) / reference.duration
    const bareCpu = bare === undefined ? 0 : cpuTimeUs(bare.pid) - bareCpuBefore
    const latencies = new LatencyHistogram()
    await hooks.beforeLoad?.()
    const cpuBefore = cpuTimeUs(spec.pid)
    const databaseCpuBefore = spec.databasePid === undefined ? 0 : cpuTimeUs(spec.databasePid)
    const result = await fire(spec, timing.seconds, latencies)
    const cpu = cpuTimeUs(spec.pid) - cpuBefore
    const databaseCpu =
      spec.databasePid === undefined ? undefined : cpuTimeUs(spec.databasePid) - databaseCpuBefore
    await hooks.afterLoad?.()
    await drain(spec)
    const codes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count]))
    for (const [code, count] of Object.entries(codes)) statusCodes[code] = (statusCodes[code] ?? 0) + count
    const rps = countAll(result) / result.duration
    rounds.push({
      rps,
      p50Ms: latencies.percentile(50),
      p99Ms: latencies.percentile(99),
      requests: countAll(result),
      errors: result.errors + result.timeouts + result.non2xx + result.mismatches,
      statusCodes: codes,
      bareRps,
      ratio: bareRps > 0 ? rps / bareRps : 0,
      cpuUsPerRequest: cpu / Math.max(1, countAll(result)),
      bareCpuUsPerRequest: reference === undefined ? 0 : bareCpu / Math.max(1, countAll(reference)),
      ...(databaseCpu === undefined
        ? {}
        : { databaseCpuUsPerRequest: databaseCpu / Math.max(1, countAll(result)) }),
    })
  }
  return summariseRounds(rounds, statusCodes, rss.stop())
}

/** A case's figures from its rounds: medians, errors summed. */
export function summariseRounds(
  rounds: RoundResult[],
  statusCodes: Record<string, number>,
  peakRssBytes: number,
): CaseMeasurement {
  return {
    rounds,
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    bareRps: median(rounds.map((r) => r.bareRps)),
    ratio: median(rounds.map((r) => r.ratio)),
    cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest)),
    bareCpuUsPerRequest: median(rounds.map((r) => r.bareCpuUsPerRequest)),
    ...(rounds.some((r) => r.databaseCpuUsPerRequest !== undefined)
      ? { databaseCpuUsPerRequest: median(rounds.map((r) => r.databaseCpuUsPerRequest ?? 0)) }
      : {}),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    statusCodes,
    peakRssBytes,
  }
}

function countAll(result: Result): number {
  return Object.values(result.statusCodeStats).reduce((sum, s) => sum + s.count, 0)
}
