// npx tsx bench/compare.ts [--against=REV] [--cases=floor,create,create-keyed,read,update,list]
//   [--pairs=N] [--seconds=N] [--seed=N] [--rate=N] [--postgres] [--env=NAME=VALUE ...]
//   [--env-a=NAME=VALUE ...]
//
// A paired comparison of two builds of the service: A is commit REV (HEAD by default), built in
// a temporary git worktree that borrows this checkout's node_modules; B is the working tree as it
// stands. Each gets a database of its own (made and migrated by its own admin CLI), both run the
// way `npm start` runs the service (both pinned to one core, each pair in new processes), and
// every case loads them in turn, A B B A …, for `pairs`
// pairs of rounds: the machine's drift falls on both alike, which two separate bench runs cannot
// promise on a shared machine. Prints, per case, B ÷ A in req/s (median of the pairs, with their
// range) and both sides' CPU µs per request. `--env` sets a variable for B only, `--env-a` for A
// only: with `--against=HEAD` and no change, the same build against itself with one setting
// changed (`--env=REQUEST_LOGS=false`). `--rate` holds the load to N requests a second, below
// what either side can answer: then CPU µs per request is the work a request costs, without
// what a saturated machine adds (both sides, the database and the load client on the same cores).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { Request } from 'autocannon'
import pg from 'pg'
import { createRequests, keyedCreateRequests, listRequests, readRequests, updateRequests } from './cases.ts'
import { measure, median, type RoundResult } from './load.ts'
import { petIdsOf } from './pet-ids.ts'
import { freePort, runNode, type ServerProcess, startProcess } from './processes.ts'
import { seedSqlitePets } from './seed.ts'
import {
  BENCH_ACCOUNT,
  basicAuth,
  buildService,
  createOAuthClient,
  fetchBearerToken,
  type OAuthClient,
  ROOT,
  serviceEnv,
} from './service.ts'

const CASES = ['floor', 'create', 'create-keyed', 'read', 'update', 'list'] as const
type CaseName = (typeof CASES)[number]

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: 'HEAD' },
    cases: { type: 'string', default: 'create' },
    pairs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '4' },
    seed: { type: 'string', default: '0' },
    rate: { type: 'string' },
    postgres: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    'env-a': { type: 'string', multiple: true, default: [] },
  },
})
const cases = values.cases.split(',') as CaseName[]
for (const name of cases)
  if (!CASES.includes(name)) throw new Error(`unknown case ${name}: ${CASES.join(', ')}`)
const pairs = Number(values.pairs)
const seconds = Number(values.seconds)

function envOf(settings: string[]): Record<string, string> {
  return Object.fromEntries(
    settings.map((setting) => {
      const at = setting.indexOf('=')
      if (at < 1) throw new Error(`--env takes NAME=VALUE, not ${setting}`)
      return [setting.slice(0, at), setting.slice(at + 1)]
    }),
  )
}

/** One side of the comparison: a checkout with its bundle built, and its own database. */
interface Side {
  label: string
  root: string
  databaseUrl: string
  env: Record<string, string>
  server?: ServerProcess
  basic?: string
  client?: OAuthClient
  bearer?: string
}

const log = (line: string) => process.stdout.write(`${line}\n`)

/** REV checked out beside this one, with this checkout's packages, its bundle built. */
function worktreeOf(rev: string, work: string): string {
  const dir = join(work, 'against')
  execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { cwd: ROOT, stdio: 'ignore' })
  const lock = (root: string) => readFileSync(join(root, 'package-lock.json'), 'utf8')
  if (lock(dir) !== lock(ROOT))
    log(`note: ${rev}'s package-lock.json differs; it runs on this checkout's packages`)
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: dir, stdio: 'inherit' })
  return dir
}

/** The admin CLI of a side's own checkout (its migrations, its schema). */
async function cli(side: Side, args: string[]): Promise<string> {
  const out = await runNode([join(side.root, 'bin', 'pet-service.js'), ...args], {
    DATABASE_URL: side.databaseUrl,
    LOG_LEVEL: 'warn',
  })
  return out.trim().split('\n').at(-1) ?? '{}'
}

/** What `npm start` runs, as each side's own package.json says. */
function startArgs(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string }
  }
  return scripts.start.replace(/^exec\s+node\s+/, '').split(/\s+/)
}

/**
 * Both services on the same core (the first), whichever is loaded: on a shared virtual machine
 * one core can run slower than the other for minutes, and a process the scheduler keeps on it
 * would look slower in every pair (unpinned, the same build against itself came out slower on
 * one side, pair after pair, on PostgreSQL). The load client and the database keep the other cores.
 */
function pin(pid: number): void {
  try {
    execFileSync('taskset', ['-a', '-cp', '0', String(pid)], { stdio: 'ignore' })
  } catch {
    log('note: taskset is not available; the two services are not pinned to one core')
  }
}

async function start(side: Side): Promise<void> {
  const port = await freePort()
  let metricsPort = await freePort()
  while (metricsPort === port) metricsPort = await freePort()
  side.server = await startProcess({
    name: side.label,
    args: startArgs(side.root),
    env: { ...serviceEnv(side.databaseUrl, port, metricsPort), ...side.env },
    port,
    readyPath: '/readyz',
    cwd: side.root,
  })
  pin(side.server.pid)
}

/** The side's service stopped and started again on its database, with a token from the new process. */
async function restart(side: Side): Promise<void> {
  await side.server?.stop()
  await start(side)
  if (side.client !== undefined)
    side.bearer = `Bearer ${await fetchBearerToken(side.server!.url, side.client)}`
}

async function credentials(side: Side): Promise<void> {
  const key = JSON.parse(await cli(side, ['keys', 'create', '--account', BENCH_ACCOUNT, '--json'])) as {
    api_key: string
  }
  side.basic = basicAuth(key.api_key)
  if (!cases.some((c) => c === 'read' || c === 'update')) return
  side.client = await createOAuthClient((args) => cli(side, args))
  side.bearer = `Bearer ${await fetchBearerToken(side.server!.url, side.client)}`
}

async function requestsOf(side: Side, name: CaseName): Promise<Request[]> {
  if (name === 'floor') return [{ method: 'GET', path: '/healthz' }]
  if (name === 'create') return createRequests(side.basic!)
  if (name === 'create-keyed') return keyedCreateRequests(side.basic!)
  const ids = await petIdsOf(side.databaseUrl, BENCH_ACCOUNT)
  if (ids.length < 100)
    throw new Error(`${side.label} has ${ids.length} pets: run a create case first or --seed`)
  if (name === 'list') return listRequests(side.basic!, ids)
  return name === 'read' ? readRequests(side.bearer!, ids) : updateRequests(side.bearer!, ids)
}

async function round(side: Side, requests: Request[], warmupSeconds: number): Promise<RoundResult> {
  const spec = {
    url: side.server!.url,
    requests,
    pid: side.server!.pid,
    drainPath: '/healthz',
    ...(values.rate === undefined ? {} : { overallRate: Number(values.rate) }),
  }
  const result = await measure(spec, { warmupSeconds, seconds, bareSeconds: 0, rounds: 1 })
  if (result.errors > 0) log(`  ${side.label}: ${result.errors} errors ${JSON.stringify(result.statusCodes)}`)
  return result.rounds[0]!
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'pet-compare-'))
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const admin = values.postgres ? new pg.Client(adminUrl) : undefined
  const sides: Side[] = []
  let worktree: string | undefined
  try {
    log(
      `A: ${values.against} (${execFileSync('git', ['rev-parse', '--short', values.against], { cwd: ROOT }).toString().trim()}); B: the working tree`,
    )
    worktree = worktreeOf(values.against, work)
    buildService()
    await admin?.connect()
    for (const [label, root, env] of [
      ['A', worktree, envOf(values['env-a'])],
      ['B', ROOT, envOf(values.env)],
    ] as const) {
      let databaseUrl = `sqlite:${join(work, `${label}.db`)}`
      if (admin !== undefined) {
        const name = `pet_compare_${process.pid}_${label.toLowerCase()}`
        await admin.query(`create database ${name}`)
        const url = new URL(adminUrl)
        url.pathname = `/${name}`
        databaseUrl = url.toString()
      }
      const side: Side = { label, root, databaseUrl, env }
      await cli(side, ['migrate'])
      sides.push(side)
    }
    const seed = Number(values.seed)
    for (const side of sides) {
      if (seed > 0) {
        if (admin !== undefined) throw new Error('--seed fills SQLite only')
        // The account exists once a key is made; seed after that, before the service starts.
        await cli(side, ['keys', 'create', '--account', BENCH_ACCOUNT, '--json'])
        seedSqlitePets(side.databaseUrl.slice('sqlite:'.length), BENCH_ACCOUNT, seed)
      }
      await start(side)
      await credentials(side)
    }
    for (const name of cases) {
      const requests = new Map<Side, Request[]>()
      const a: RoundResult[] = []
      const b: RoundResult[] = []
      for (let i = 0; i < pairs; i++) {
        // New processes for every pair: what the JIT made of one process's run (and where the
        // kernel put its memory) can make it a few percent slower or faster than another of the
        // same build for as long as it lives; restarted, that falls on the pairs at random.
        if (i > 0) for (const side of sides) await restart(side)
        for (const side of sides) requests.set(side, await requestsOf(side, name))
        const order = i % 2 === 0 ? [sides[0]!, sides[1]!] : [sides[1]!, sides[0]!]
        for (const side of order) {
          const result = await round(side, requests.get(side)!, 2)
          ;(side === sides[0] ? a : b).push(result)
        }
      }
      const ratios = b.map((r, i) => r.rps / Math.max(1, a[i]!.rps))
      const cpuA = median(a.map((r) => r.cpuUsPerRequest))
      const cpuB = median(b.map((r) => r.cpuUsPerRequest))
      const cpuRatios = b.map((r, i) => r.cpuUsPerRequest / Math.max(1, a[i]!.cpuUsPerRequest))
      log(
        `${name}: B ÷ A ${median(ratios).toFixed(3)} (pairs ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); ` +
          `req/s A ${median(a.map((r) => r.rps)).toFixed(0)}, B ${median(b.map((r) => r.rps)).toFixed(0)}; ` +
          `CPU µs/request A ${cpuA.toFixed(1)}, B ${cpuB.toFixed(1)} (B ÷ A ${median(cpuRatios).toFixed(3)}, pairs ${Math.min(...cpuRatios).toFixed(3)}–${Math.max(...cpuRatios).toFixed(3)})`,
      )
    }
  } finally {
    await Promise.all(sides.map((side) => side.server?.stop()))
    if (admin !== undefined) {
      for (const side of sides)
        await admin.query(
          `drop database if exists ${new URL(side.databaseUrl).pathname.slice(1)} with (force)`,
        )
      await admin.end()
    }
    if (worktree !== undefined && existsSync(worktree)) {
      execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT, stdio: 'ignore' })
    }
    rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
