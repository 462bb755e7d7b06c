import { DIALECT } from '../helpers/database.ts'

/**
 * How much the fuzzer runs and from which seed. `FUZZ_SEED` replays a run exactly (the seed is
 * printed at the start of every fuzz file, and fast-check prints it with any counterexample);
 * `FUZZ_RUNS` is the number of requests per dialect, split among the fuzz files.
 */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 20_000)

if (!Number.isSafeInteger(FUZZ_SEED))
  throw new Error(`FUZZ_SEED must be an integer, not ${process.env.FUZZ_SEED}`)
if (!Number.isSafeInteger(FUZZ_RUNS) || FUZZ_RUNS < 100) throw new Error('FUZZ_RUNS must be an integer ≥ 100')

/** Each file's share of FUZZ_RUNS. */
export const SHARES = { api: 0.85, oauthAndDashboard: 0.12, rawHttp: 0.03 } as const

export function requestsFor(share: keyof typeof SHARES): number {
  return Math.max(50, Math.round(FUZZ_RUNS * SHARES[share]))
}

/** Printed by each fuzz file so a failure can be replayed. */
export function announce(file: string, requests: number): void {
  console.log(`[fuzz] ${file} [${DIALECT}]: ${requests} requests, replay with FUZZ_SEED=${FUZZ_SEED}`)
}

/** Generous: minutes, for the slowest shared machine; FUZZ_RUNS scales it. */
export function fuzzTimeoutMs(requests: number): number {
  return Math.max(120_000, requests * 30)
}
