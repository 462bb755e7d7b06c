// npx tsx bench/profile.ts [healthz|create|create-keyed|create-webhook|list|read|update ...] [--seconds=N]
//   [--seed=N] [--postgres]
//
// Runs the service from its sources (through tsx, so that each frame names its source file)
// under `node --cpu-prof` (production settings; SQLite in a temporary directory, or with
// --postgres a database of its own on BENCH_POSTGRES_URL's server, dropped afterwards), loads
// one case at a time at 50 connections, and summarises where the CPU time
// went: by area (our code, each package, Node internals, GC, idle), by function (self time)
// and by our own functions including what they call. The raw .cpuprofile files are kept in
// bench/results/profiles/ (open them in Chrome DevTools or speedscope for flame graphs).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createRequests, keyedCreateRequests, listRequests, readRequests, updateRequests } from './cases.ts'
import { measure } from './load.ts'
import { petIdsOf } from './pet-ids.ts'
import { seedSqlitePets } from './seed.ts'
import {
  BENCH_ACCOUNT,
  basicAuth,
  createApiKey,
  createOAuthClient,
  fetchBearerToken,
  ROOT,
  startBare,
  startService,
} from './service.ts'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}

interface CpuProfile {
  startTime: number
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** Where a frame's code lives: our source file, a package, Node itself, or a VM pseudo-frame. */
function area(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg?.[1] !== undefined) return pkg[1]
  const own = /\/work\/[^/]+\/|\/(src|bench|bin)\//.exec(url)
  if (url.startsWith('node:')) return 'node (internals)'
  if (own !== null) return url.slice(url.lastIndexOf('/src/') >= 0 ? url.lastIndexOf('/src/') + 1 : 0)
  return url
}

export interface ProfileSummary {
  totalMs: number
  byArea: [string, number][]
  selfByFunction: [string, number][]
  inclusiveOwn: [string, number][]
}

/**
 * Sums the samples taken between `fromUs` and `toUs` (CLOCK_MONOTONIC microseconds, the clock
 * of both V8's profile timestamps and process.hrtime), so start-up and warm-up stay out.
 */
export function summarise(
  profile: CpuProfile,
  fromUs = 0,
  toUs = Number.POSITIVE_INFINITY,
  top = 25,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const key = (n: ProfileNode) => {
    const file = n.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/').replace(/^file:\/\//, '')
    return `${n.callFrame.functionName || '(anonymous)'} ${file}:${n.callFrame.lineNumber + 1}`
  }
  const selfByArea = new Map<string, number>()
  const selfByFunction = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (at < fromUs || at > toUs) return
    const ms = (profile.timeDeltas[i] ?? 0) / 1000
    total += ms
    const node = byId.get(id)
    if (node === undefined) return
    const a = area(node.callFrame.url, node.callFrame.functionName)
    selfByArea.set(a, (selfByArea.get(a) ?? 0) + ms)
    selfByFunction.set(key(node), (selfByFunction.get(key(node)) ?? 0) + ms)
    // Inclusive time of our own functions: count each function once per sample.
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)
      if (frame === undefined || !frame.callFrame.url.includes('/src/')) continue
      const k = key(frame)
      if (seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + ms)
    }
  })
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
  return {
    totalMs: total,
    byArea: sorted(selfByArea),
    selfByFunction: sorted(selfByFunction),
    inclusiveOwn: sorted(inclusive),
  }
}

export function formatSummary(name: string, summary: ProfileSummary, requests: number): string {
  const pct = (ms: number) => `${((ms / summary.totalMs) * 100).toFixed(1).padStart(5)}%`
  const perReq = (ms: number) => `${((ms * 1000) / Math.max(1, requests)).toFixed(1).padStart(6)} µs/req`
  const table = (rows: [string, number][]) =>
    rows.map(([k, ms]) => `  ${pct(ms)}  ${perReq(ms)}  ${k}`).join('\n')
  return [
    `## ${name}: ${summary.totalMs.toFixed(0)} ms of samples, ${requests} requests`,
    '',
    'Self time by area:',
    table(summary.byArea.slice(0, 15)),
    '',
    'Self time by function:',
    table(summary.selfByFunction),
    '',
    'Inclusive time of our own functions (src/):',
    table(summary.inclusiveOwn),
    '',
  ].join('\n')
}

/** A database for the run: a file in `work`, or a fresh PostgreSQL database (and how to drop it). */
async function openDatabase(
  postgres: boolean,
  work: string,
): Promise<{ databaseUrl: string; drop: () => Promise<void> }> {
  if (!postgres) return { databaseUrl: `sqlite:${join(work, 'bench.db')}`, drop: async () => {} }
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const name = `pet_profile_${process.pid}_${Date.now()}`
  await admin.query(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    databaseUrl: url.toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => {})
      await admin.end()
    },
  }
}

/** Subscribes one endpoint to every event, delivered to `receiver`; its id. */
async function subscribe(serverUrl: string, authorization: string, receiver: string): Promise<string> {
  const res = await fetch(`${serverUrl}/v1/webhook_endpoint`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver}/hook`, enabled_events: ['*'] }),
  })
  if (res.status !== 201) throw new Error(`no webhook endpoint: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { id: string }).id
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      seconds: { type: 'string', default: '10' },
      seed: { type: 'string', default: '0' },
      postgres: { type: 'boolean', default: false },
    },
  })
  const which = positionals.length > 0 ? positionals : ['create', 'list']
  const seconds = Number(values.seconds)
  const work = mkdtempSync(join(tmpdir(), 'pet-profile-'))
  const outDir = join(ROOT, 'bench', 'results', 'profiles')
  mkdirSync(outDir, { recursive: true })
  const database = await openDatabase(values.postgres, work)
  const { databaseUrl } = database
  const prefix = values.postgres ? 'postgres-' : ''
  const report: string[] = []
  try {
    const basic = basicAuth(await createApiKey(databaseUrl))
    const seed = Number(values.seed)
    if (seed > 0) {
      if (values.postgres) throw new Error('--seed fills SQLite only')
      seedSqlitePets(join(work, 'bench.db'), BENCH_ACCOUNT, seed)
    }
    // Fill the table first so that list and read have rows, outside any profile.
    if (which.some((w) => !w.startsWith('create'))) {
      const filler = await startService(databaseUrl, { from: 'sources' })
      try {
        await measure(
          { url: filler.url, requests: createRequests(basic), pid: filler.pid, drainPath: '/healthz' },
          { warmupSeconds: 0, seconds: 3, bareSeconds: 0, rounds: 1 },
        )
      } finally {
        await filler.stop()
      }
    }
    for (const name of which) {
      const profDir = join(work, `prof-${name}`)
      const server = await startService(databaseUrl, {
        from: 'sources',
        nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
      })
      const receiver = name === 'create-webhook' ? await startBare() : undefined
      let requests = 0
      let window: [number, number] = [0, Number.POSITIVE_INFINITY]
      try {
        const ids = await petIdsOf(databaseUrl, BENCH_ACCOUNT)
        let bearer = ''
        if (name === 'read' || name === 'update') {
          bearer = `Bearer ${await fetchBearerToken(server.url, await createOAuthClient(databaseUrl))}`
        }
        if (receiver !== undefined) await subscribe(server.url, basic, receiver.url)
        const requestsFor = {
          healthz: () => [{ method: 'GET', path: '/healthz' }],
          create: () => createRequests(basic),
          'create-keyed': () => keyedCreateRequests(basic),
          'create-webhook': () => createRequests(basic),
          list: () => listRequests(basic, ids),
          read: () => readRequests(bearer, ids),
          update: () => updateRequests(bearer, ids),
        }[name]
        if (requestsFor === undefined) throw new Error(`unknown case ${name}`)
        const spec = { url: server.url, requests: requestsFor(), pid: server.pid, drainPath: '/healthz' }
        await measure(spec, { warmupSeconds: 0, seconds: 2, bareSeconds: 0, rounds: 1 })
        const from = Number(process.hrtime.bigint() / 1000n)
        const result = await measure(spec, { warmupSeconds: 0, seconds, bareSeconds: 0, rounds: 1 })
        window = [from, Number(process.hrtime.bigint() / 1000n)]
        requests = result.rounds[0]?.requests ?? 0
        process.stdout.write(
          `${name}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, errors ${result.errors}\n`,
        )
      } finally {
        await server.stop()
        await receiver?.stop()
      }
      const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))
      if (file === undefined) throw new Error(`no profile was written for ${name}`)
      const target = join(outDir, `${prefix}${name}.cpuprofile`)
      renameSync(join(profDir, file), target)
      const profile = JSON.parse(readFileSync(target, 'utf8')) as CpuProfile
      let summary = summarise(profile, window[0], window[1])
      if (summary.totalMs === 0) {
        process.stdout.write('(the profile clock did not match ours: summarising the whole profile)\n')
        summary = summarise(profile)
      }
      report.push(formatSummary(`${prefix}${name}`, summary, requests))
    }
  } finally {
    await database.drop()
    rmSync(work, { recursive: true, force: true })
  }
  const text = report.join('\n')
  writeFileSync(join(outDir, `${prefix}summary.txt`), text)
  process.stdout.write(`\n${text}\nProfiles and this summary are in ${outDir}\n`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
