// npm run bench [-- --quick] [--only=sqlite,sqlite-1m,postgres,json-server] [--seconds=N] [--rounds=N]
//                [--cases=floor,create,create-keyed,create-webhook,read,update,list,create-2-workers,create-no-logs,peer,orm-peer]
//
// Measures the service against a bare node:http server in the same run (see bench/README.md),
// against peers (bench/peer-server.ts, a hand-written single insert; bench/orm-peer-server.ts,
// the same create through an ORM) and against itself with two workers. Every server runs in a
// process of its own; this process is the load client.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createRequests, keyedCreateRequests, listRequests, readRequests, updateRequests } from './cases.ts'
import {
  type CaseMeasurement,
  CONNECTIONS,
  type LoadSpec,
  measure,
  median,
  type RoundHooks,
  type RoundResult,
  summariseRounds,
  type Timing,
} from './load.ts'
import { petIdsOf } from './pet-ids.ts'
import { freePort, parentPid, runNode, type ServerProcess, startProcess } from './processes.ts'
import {
  type CaseRecord,
  type Check,
  type Group,
  isPeer,
  markdownReport,
  type Report,
  svgChart,
} from './report.ts'
import { seedSqlitePets, writeJsonServerDb } from './seed.ts'
import {
  BENCH_ACCOUNT,
  basicAuth,
  buildService,
  type Capabilities,
  createApiKey,
  createOAuthClient,
  fetchBearerToken,
  newestPetId,
  type OAuthClient,
  type PeerKind,
  probeCapabilities,
  ROOT,
  startBare,
  startPeer,
  startService,
} from './service.ts'

const GROUPS = ['sqlite', 'sqlite-1m', 'postgres', 'json-server'] as const
const SEED_PETS = 1_000_000
const JSON_SERVER_SEED = 50_000

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    cases: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
  },
})
const mode = args.quick ? 'quick' : 'full'
// Short rounds, many of them: the machine is shared and its speed drifts within seconds, so
// each case round is paired with a bare-server round just before it and the median ratio wins.
const timing: Timing = {
  warmupSeconds: args.quick ? 1 : 2,
  seconds: Number(args.seconds ?? (args.quick ? 2 : 4)),
  bareSeconds: args.quick ? 1 : 2,
  rounds: Number(args.rounds ?? (args.quick ? 1 : 5)),
}
/**
 * Pairs of rounds in the checks that compare two settings round against round (a webhook
 * endpoint, request logs): the median of their ratios is the check, and one pair's ratio moves
 * more than the cost being checked on a shared machine (bench/README.md), so a full run takes at
 * least 9.
 */
const pairedRounds = args.quick || args.rounds !== undefined ? timing.rounds : Math.max(timing.rounds, 9)
const only = new Set(args.only === undefined ? GROUPS : args.only.split(','))
/** Cases to run (all by default): one case again, without the rest of its group, while working on it. */
const onlyCases = args.cases === undefined ? undefined : new Set(args.cases.split(','))
const wanted = (name: string) => onlyCases === undefined || onlyCases.has(name)
const startedAt = Date.now()
const work = mkdtempSync(join(tmpdir(), 'pet-bench-'))
const cases: CaseRecord[] = []
const bareSamples: number[] = []
const bareCpuSamples: number[] = []
const sqliteAlone: Report['sqliteAlone'] = {}
const running = new Set<ServerProcess>()
let bare: ServerProcess | undefined

function log(message: string): void {
  const elapsed = ((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)
  process.stdout.write(`[${elapsed}s] ${message}\n`)
}

/**
 * PostgreSQL's postmaster while the PostgreSQL group runs, when the server is on this machine:
 * every round there also measures the server's CPU per request (its backends are the
 * postmaster's children).
 */
let postgresPid: number | undefined

async function run(
  server: ServerProcess,
  requests: LoadSpec['requests'],
  drainPath = '/healthz',
  overrides: Partial<Timing> = {},
  hooks: RoundHooks = {},
): Promise<CaseMeasurement> {
  if (bare === undefined) throw new Error('the bare server is not running')
  const reference = { url: bare.url, requests: BARE_REQUESTS, pid: bare.pid, drainPath: '/' }
  const spec = {
    url: server.url,
    requests,
    pid: server.pid,
    drainPath,
    ...(postgresPid === undefined ? {} : { databasePid: postgresPid }),
  }
  const result = await measure(spec, { ...timing, ...overrides }, reference, hooks)
  bareSamples.push(...result.rounds.map((r) => r.bareRps))
  bareCpuSamples.push(...result.rounds.map((r) => r.bareCpuUsPerRequest).filter((us) => us > 0))
  return result
}

/** Runs one case and records it; a failure is recorded too and the run goes on. */
async function runCase(
  base: Omit<CaseRecord, 'rps'>,
  body: () => Promise<CaseMeasurement | string>,
): Promise<CaseRecord> {
  const record: CaseRecord = { ...base }
  if (record.skipped === undefined) {
    log(`${record.label}: ${record.request} …`)
    try {
      const outcome = await body()
      if (typeof outcome === 'string') record.skipped = outcome
      else {
        Object.assign(record, {
          rps: outcome.rps,
          p50Ms: outcome.p50Ms,
          p99Ms: outcome.p99Ms,
          errors: outcome.errors,
          statusCodes: outcome.statusCodes,
          peakRssMb: outcome.peakRssBytes / 2 ** 20,
          ratio: outcome.ratio,
          bareRps: outcome.bareRps,
          cpuUsPerRequest: outcome.cpuUsPerRequest,
          databaseCpuUsPerRequest: outcome.databaseCpuUsPerRequest,
          cpuRatio:
            outcome.cpuUsPerRequest > 0 ? outcome.bareCpuUsPerRequest / outcome.cpuUsPerRequest : undefined,
          rounds: outcome.rounds,
        })
      }
    } catch (error) {
      record.failed = error instanceof Error ? error.message.split('\n')[0] : String(error)
    }
  }
  if (record.skipped !== undefined) log(`${record.label}: skipped (${record.skipped})`)
  else if (record.failed !== undefined) log(`${record.label}: FAILED (${record.failed})`)
  else {
    log(
      `${record.label}: ${record.rps?.toFixed(0)} req/s, p50 ${record.p50Ms?.toFixed(2)} ms, p99 ${record.p99Ms?.toFixed(2)} ms, errors ${record.errors}, peak RSS ${record.peakRssMb?.toFixed(0)} MB${
        record.errors ? ` ${JSON.stringify(record.statusCodes)}` : ''
      }`,
    )
  }
  cases.push(record)
  return record
}

async function track<T extends ServerProcess>(start: Promise<T>): Promise<T> {
  const server = await start
  running.add(server)
  return server
}

async function stop(server: ServerProcess | undefined): Promise<void> {
  if (server === undefined) return
  running.delete(server)
  await server.stop()
}

const BARE_REQUESTS = [{ method: 'GET', path: '/' }]

/** The bare server against itself: its ratio shows how far the pairing of rounds is from 1. */
async function measureBare(): Promise<void> {
  const target = bare!
  await runCase({ id: 'reference.bare', label: 'bare node:http', group: 'reference', request: 'GET /' }, () =>
    run(target, BARE_REQUESTS, '/'),
  )
}

interface Credentials {
  basic: string
  bearer: string | undefined
  /** Why there is no bearer token (the OAuth work is not there yet, say). */
  noBearer: string | undefined
}

interface Started {
  server: ServerProcess
  caps: Capabilities
  creds: Credentials
  /** Kept for a restart on the same database: no admin CLI round trip then. */
  reuse: { basic: string; client: OAuthClient | Error }
}

/**
 * An API key (the admin CLI, which also migrates), then the service and an OAuth client at
 * once, then a bearer token. A restart on the same database reuses the key and the client.
 */
async function startWithCredentials(
  databaseUrl: string,
  reuse?: Started['reuse'],
  serveArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Started> {
  const basic = reuse?.basic ?? basicAuth(await createApiKey(databaseUrl))
  const [server, client] = await Promise.all([
    track(startService(databaseUrl, { serveArgs, env })),
    reuse?.client ?? createOAuthClient(databaseUrl).catch((error: unknown) => error as Error),
  ])
  const caps = await probeCapabilities(server.url)
  const creds: Credentials = { basic, bearer: undefined, noBearer: undefined }
  if (!caps.oauthToken) creds.noBearer = 'POST /oauth/token is not there yet'
  else if (client instanceof Error) creds.noBearer = `no OAuth client: ${client.message.split('\n')[0]}`
  else {
    try {
      creds.bearer = `Bearer ${await fetchBearerToken(server.url, client)}`
    } catch (error) {
      creds.noBearer = `no bearer token: ${error instanceof Error ? error.message.split('\n')[0] : error}`
    }
  }
  return { server, caps, creds, reuse: { basic, client } }
}

function v2Skip(caps: Capabilities, creds: Credentials, need: 'v2Read' | 'v2Update'): string | undefined {
  if (!caps[need])
    return `${need === 'v2Read' ? 'GET /v2/pet/{id}' : 'PUT /v2/pet'} is not in the service's /openapi.json yet`
  return creds.noBearer
}

/** create, read, update, list against one running service; `which` picks the cases. */
async function serviceCases(
  group: Group,
  labelSuffix: string,
  server: ServerProcess,
  databaseUrl: string,
  caps: Capabilities,
  creds: Credentials,
  which: ('floor' | 'create' | 'create-keyed' | 'create-webhook' | 'read' | 'update' | 'list')[],
): Promise<void> {
  which = which.filter(wanted)
  const pets = () => newestPetId(server.url, creds.basic)
  if (which.includes('floor')) {
    // The service's own floor: Fastify and the global hooks, no authentication, no database.
    await runCase(
      { id: `${group}.floor`, label: 'floor: GET /healthz', group, request: 'GET /healthz (no auth, no DB)' },
      () => run(server, [{ method: 'GET', path: '/healthz' }]),
    )
  }
  if (which.includes('create')) {
    const before = await groupCommits(server)
    await runCase(
      {
        id: `${group}.create`,
        label: `create${labelSuffix}`,
        group,
        request: 'POST /v1/pet (form, Basic key)',
        petsBefore: await pets(),
      },
      () => run(server, createRequests(creds.basic)),
    )
    const after = await groupCommits(server)
    if (before !== undefined && after !== undefined && after.commits > before.commits) {
      createsPerCommit[group] = (after.transactions - before.transactions) / (after.commits - before.commits)
    }
  }
  if (which.includes('create-keyed')) {
    await runCase(
      {
        id: `${group}.create-keyed`,
        label: `create, Idempotency-Key${labelSuffix}`,
        group,
        request: 'POST /v1/pet (form, Basic key, a new Idempotency-Key each)',
        petsBefore: await pets(),
      },
      () => run(server, keyedCreateRequests(creds.basic)),
    )
  }
  if (which.includes('create-webhook')) await createWithWebhook(group, labelSuffix, server, creds)
  const ids = which.some((c) => c === 'read' || c === 'update' || c === 'list')
    ? await petIdsOf(databaseUrl, BENCH_ACCOUNT)
    : []
  if (which.includes('read')) {
    await runCase(
      {
        id: `${group}.read`,
        label: `read${labelSuffix}`,
        group,
        request: 'GET /v2/pet/{id} (bearer)',
        petsBefore: ids.length,
        ...(v2Skip(caps, creds, 'v2Read') === undefined ? {} : { skipped: v2Skip(caps, creds, 'v2Read') }),
      },
      async () => (ids.length === 0 ? 'no pets to read' : run(server, readRequests(creds.bearer!, ids))),
    )
  }
  if (which.includes('update')) {
    await runCase(
      {
        id: `${group}.update`,
        label: `update${labelSuffix}`,
        group,
        request: 'PUT /v2/pet (JSON, bearer)',
        petsBefore: ids.length,
        ...(v2Skip(caps, creds, 'v2Update') === undefined
          ? {}
          : { skipped: v2Skip(caps, creds, 'v2Update') }),
      },
      async () => (ids.length === 0 ? 'no pets to update' : run(server, updateRequests(creds.bearer!, ids))),
    )
  }
  if (which.includes('list')) {
    await runCase(
      {
        id: `${group}.list`,
        label: `list page${labelSuffix}`,
        group,
        request: 'GET /v1/pet?limit=10&starting_after=… (deep)',
        petsBefore: ids.length,
      },
      async () =>
        ids.length < 100 ? 'too few pets to page through' : run(server, listRequests(creds.basic, ids)),
    )
  }
}

/**
 * Creates while one webhook endpoint subscribes to every event, delivered to a receiver of its
 * own (a bare node:http server answering 200): the request path only inserts the event, and
 * the worker's fan-out and sends must not slow it by more than 10 %. Compared with the same
 * creates while the endpoint is disabled, round for round: the two alternate on one server
 * (ABBA, so that the machine's drift and the tables' growth fall on both alike), each after
 * its bare round, an idle second in which the worker catches up as it would between bursts.
 */
async function createWithWebhook(
  group: Group,
  labelSuffix: string,
  server: ServerProcess,
  creds: Credentials,
) {
  const receiver = await track(startBare())
  const headers = { authorization: creds.basic, 'content-type': 'application/json' }
  let endpointId: string | undefined
  const setStatus = async (status: 'enabled' | 'disabled') => {
    const res = await fetch(`${server.url}/v1/webhook_endpoint/${endpointId}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ status }),
    })
    if (res.status !== 200) throw new Error(`could not set the endpoint ${status}: ${res.status}`)
  }
  let versus: CaseRecord['versus']
  let webhooks: CaseRecord['webhooks']
  try {
    const record = await runCase(
      {
        id: `${group}.create-webhook`,
        label: `create, 1 webhook endpoint${labelSuffix}`,
        group,
        request: 'POST /v1/pet (form, Basic key), every event delivered to a loopback receiver',
      },
      async () => {
        const res = await fetch(`${server.url}/v1/webhook_endpoint`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ url: `${receiver.url}/hook`, enabled_events: ['*'] }),
        })
        if (res.status !== 201) return `no webhook endpoint: ${res.status} ${await res.text()}`
        endpointId = ((await res.json()) as { id: string }).id
        const requests = createRequests(creds.basic)
        const on: RoundResult[] = []
        const off: RoundResult[] = []
        const codes: Record<string, number> = {}
        let peakRssBytes = 0
        // Deliveries made while the creates saturate the service (each create writes one event).
        const underLoad: { delivered: number; events: number; seconds: number }[] = []
        for (let i = 0; i < pairedRounds; i++) {
          const order = i % 2 === 0 ? (['disabled', 'enabled'] as const) : (['enabled', 'disabled'] as const)
          for (const status of order) {
            await setStatus(status)
            const warmupSeconds = i === 0 && status === order[0] ? timing.warmupSeconds : 0
            let before: WebhookFigures | undefined
            let started = 0
            let loaded: { delivered: number; seconds: number } | undefined
            const hooks: RoundHooks =
              status === 'enabled'
                ? {
                    beforeLoad: async () => {
                      before = await webhookFigures(server)
                      started = performance.now()
                    },
                    afterLoad: async () => {
                      const seconds = (performance.now() - started) / 1000
                      const after = await webhookFigures(server)
                      if (before !== undefined && after !== undefined)
                        loaded = { delivered: after.delivered - before.delivered, seconds }
                    },
                  }
                : {}
            const measured = await run(server, requests, '/healthz', { rounds: 1, warmupSeconds }, hooks)
            if (loaded !== undefined) underLoad.push({ ...loaded, events: measured.rounds[0]!.requests })
            ;(status === 'enabled' ? on : off).push(measured.rounds[0]!)
            peakRssBytes = Math.max(peakRssBytes, measured.peakRssBytes)
            if (status === 'enabled')
              for (const [code, n] of Object.entries(measured.statusCodes))
                codes[code] = (codes[code] ?? 0) + n
          }
        }
        const pairs = on.map((round, i) => round.rps / Math.max(1, off[i]!.rps))
        versus = {
          label: 'the endpoint disabled',
          rps: median(off.map((r) => r.rps)),
          ratio: median(pairs),
          cpuUsPerRequest: median(off.map((r) => r.cpuUsPerRequest)),
        }
        log(
          `  without (endpoint disabled): ${versus.rps.toFixed(0)} req/s, ${versus.cpuUsPerRequest.toFixed(0)} µs CPU/request; with ÷ without, per pair: ${pairs.map((r) => r.toFixed(3)).join(', ')}`,
        )
        webhooks = await drainWebhooks(server, underLoad, setStatus)
        return summariseRounds(on, codes, peakRssBytes)
      },
    )
    if (versus !== undefined) record.versus = versus
    if (webhooks !== undefined) record.webhooks = webhooks
  } finally {
    // Its backlog goes with it, so that the next cases run without deliveries.
    if (endpointId !== undefined) {
      await fetch(`${server.url}/v1/webhook_endpoint/${endpointId}`, { method: 'DELETE', headers })
    }
    await stop(receiver)
  }
}

/** A sample's value from the service's /metrics (NaN when absent); undefined without metrics. */
async function metricsOf(server: ServerProcess): Promise<((sample: string) => number) | undefined> {
  if (server.metricsUrl === undefined) return undefined
  const text = await (await fetch(server.metricsUrl)).text()
  return (sample) => Number(new RegExp(`^${sample} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

/** Transactions per shared SQLite commit in each group's create case (bench/sqlite-ceiling.ts uses it). */
const createsPerCommit: Partial<Record<Group, number>> = {}

/** The SQLite service's shared commits so far, and the transactions they carried (its /metrics). */
async function groupCommits(
  server: ServerProcess,
): Promise<{ commits: number; transactions: number } | undefined> {
  const value = await metricsOf(server)
  if (value === undefined) return undefined
  const figures = {
    commits: value('sqlite_group_commit_transactions_count'),
    transactions: value('sqlite_group_commit_transactions_sum'),
  }
  return Object.values(figures).some(Number.isNaN) ? undefined : figures
}

interface WebhookFigures {
  delivered: number
  open: number
  waiting: number
}

/** The service's webhook figures, from its /metrics; undefined when it has none (an older service). */
async function webhookFigures(server: ServerProcess): Promise<WebhookFigures | undefined> {
  const value = await metricsOf(server)
  if (value === undefined) return undefined
  const figures = {
    delivered: value('webhook_deliveries_total\\{outcome="succeeded"\\}'),
    open: value('webhook_deliveries_open'),
    waiting: value('webhook_events_waiting_fan_out'),
  }
  return Object.values(figures).some(Number.isNaN) ? undefined : figures
}

/**
 * The webhook figures of the create-webhook case: deliveries per second while the creates
 * saturated the service (medians of its rounds), then, with the endpoint enabled and no load,
 * the time the backlog left over took to drain.
 */
async function drainWebhooks(
  server: ServerProcess,
  underLoad: { delivered: number; events: number; seconds: number }[],
  setStatus: (status: 'enabled' | 'disabled') => Promise<void>,
): Promise<CaseRecord['webhooks']> {
  if (underLoad.length === 0) return undefined
  await setStatus('enabled')
  const start = await webhookFigures(server)
  if (start === undefined) return undefined
  const started = performance.now()
  let last = start
  while (performance.now() - started < 300_000 && (last.open > 0 || last.waiting > 0)) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    last = (await webhookFigures(server)) ?? last
  }
  const webhooks = {
    deliveredPerSecond: median(underLoad.map((r) => r.delivered / r.seconds)),
    eventsPerSecond: median(underLoad.map((r) => r.events / r.seconds)),
    drained: last.delivered - start.delivered,
    drainSeconds: (performance.now() - started) / 1000,
  }
  log(
    `  deliveries while the creates saturate the service: ${webhooks.deliveredPerSecond.toFixed(0)}/s of ${webhooks.eventsPerSecond.toFixed(0)} events/s; then ${webhooks.drained} delivered in ${webhooks.drainSeconds.toFixed(1)} s with no load`,
  )
  return webhooks
}

const PEER_CASES: Record<PeerKind, { id: string; label: (on: string) => string; request: string }> = {
  insert: {
    id: 'peer-create',
    label: (on) => `peer: Fastify + ${on === 'sqlite' ? 'better-sqlite3' : 'pg Pool'} insert`,
    request: 'POST /v1/pet (form, no auth): one INSERT … RETURNING',
  },
  orm: {
    id: 'orm-peer-create',
    label: (on) => `ORM peer: Drizzle (${on === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
    request: 'POST /v1/pet (form, Basic key): key looked up, pet and event inserted in one transaction',
  },
}

/**
 * A peer under the create case's load, the service stopped, on a database of its own: the
 * hand-written single insert (bench/peer-server.ts), or the same create through an ORM
 * (bench/orm-peer-server.ts), which is given a key of its own to check.
 */
async function peerCase(kind: PeerKind, group: 'sqlite' | 'postgres', target: string): Promise<void> {
  const { id, label, request } = PEER_CASES[kind]
  const key = kind === 'orm' ? `orm_${randomBytes(16).toString('hex')}` : undefined
  let peer: ServerProcess | undefined
  try {
    await runCase({ id: `${group}.${id}`, label: label(group), group, request }, async () => {
      peer = await track(startPeer(kind, group, target, key === undefined ? {} : { SEED_API_KEY: key }))
      return run(peer, createRequests(key === undefined ? '' : basicAuth(key)))
    })
  } finally {
    await stop(peer)
  }
}

/** The create case against `serve --workers 2` on the same database, credentials reused. */
async function twoWorkersCase(group: 'sqlite' | 'postgres', databaseUrl: string, reuse: Started['reuse']) {
  let server: ServerProcess | undefined
  const suffix = group === 'postgres' ? ' (PostgreSQL)' : ''
  try {
    await runCase(
      {
        id: `${group}.create-2-workers`,
        label: `create, 2 workers${suffix}`,
        group,
        request: 'POST /v1/pet (form, Basic key), serve --workers 2',
      },
      async () => {
        const started = await startWithCredentials(databaseUrl, reuse, ['--workers', '2'])
        server = started.server
        return run(server, createRequests(started.creds.basic))
      },
    )
  } finally {
    await stop(server)
  }
}

/**
 * The create case on two services side by side on the same database, credentials reused: one
 * recording request logs, one with `REQUEST_LOGS=false`, loaded in turn (the order swapped each
 * round). The median of the rounds' ratios (on ÷ off) is what recording them costs; pairing them
 * round by round cancels the machine's drift, which a comparison of two cases, each against its
 * own bare rounds, does not.
 */
async function requestLogsCase(group: 'sqlite' | 'postgres', databaseUrl: string, reuse: Started['reuse']) {
  const servers: ServerProcess[] = []
  const suffix = group === 'postgres' ? ' (PostgreSQL)' : ''
  let versus: CaseRecord['versus']
  try {
    const record = await runCase(
      {
        id: `${group}.create-no-logs`,
        label: `create, request logs on and off in turn${suffix}`,
        group,
        request: 'POST /v1/pet (form, Basic key), against REQUEST_LOGS=false',
      },
      async () => {
        const [on, off] = await Promise.all([
          startWithCredentials(databaseUrl, reuse),
          startWithCredentials(databaseUrl, reuse, [], { REQUEST_LOGS: 'false' }),
        ])
        servers.push(on.server, off.server)
        const onRounds: RoundResult[] = []
        const offRounds: RoundResult[] = []
        const codes: Record<string, number> = {}
        let peakRssBytes = 0
        for (let i = 0; i < pairedRounds; i++) {
          const order = i % 2 === 0 ? ([off, on] as const) : ([on, off] as const)
          for (const started of order) {
            const warmupSeconds = i === 0 ? timing.warmupSeconds : 0
            const measured = await run(started.server, createRequests(started.creds.basic), '/healthz', {
              rounds: 1,
              warmupSeconds,
            })
            const logging = started === on
            ;(logging ? onRounds : offRounds).push(measured.rounds[0]!)
            if (logging) {
              peakRssBytes = Math.max(peakRssBytes, measured.peakRssBytes)
              for (const [code, n] of Object.entries(measured.statusCodes))
                codes[code] = (codes[code] ?? 0) + n
            }
          }
        }
        const pairs = onRounds.map((round, i) => round.rps / Math.max(1, offRounds[i]!.rps))
        versus = {
          label: 'REQUEST_LOGS=false',
          rps: median(offRounds.map((r) => r.rps)),
          ratio: median(pairs),
          cpuUsPerRequest: median(offRounds.map((r) => r.cpuUsPerRequest)),
        }
        log(
          `  without request logs: ${versus.rps.toFixed(0)} req/s, ${versus.cpuUsPerRequest.toFixed(0)} µs CPU/request; with ÷ without, per pair: ${pairs.map((r) => r.toFixed(3)).join(', ')}`,
        )
        return summariseRounds(onRounds, codes, peakRssBytes)
      },
    )
    if (versus !== undefined) record.versus = versus
  } finally {
    await Promise.all(servers.map((server) => stop(server)))
  }
}

async function sqliteGroups(): Promise<void> {
  const dbPath = join(work, 'bench.db')
  const databaseUrl = `sqlite:${dbPath}`
  if (only.has('sqlite') || only.has('sqlite-1m')) log(`SQLite database: ${dbPath}`)
  else return
  let started = await startWithCredentials(databaseUrl)
  try {
    if (only.has('sqlite')) {
      const { server, caps, creds } = started
      await serviceCases('sqlite', '', server, databaseUrl, caps, creds, [
        'floor',
        'create',
        'create-keyed',
        'create-webhook',
        'read',
        'update',
        'list',
      ])
    }
    await stop(started.server)
    if (only.has('sqlite')) {
      if (wanted('create-2-workers')) await twoWorkersCase('sqlite', databaseUrl, started.reuse)
      if (wanted('create-no-logs')) await requestLogsCase('sqlite', databaseUrl, started.reuse)
      if (wanted('peer')) await peerCase('insert', 'sqlite', join(work, 'peer.db'))
      if (wanted('orm-peer')) await peerCase('orm', 'sqlite', join(work, 'orm-peer.db'))
      if (onlyCases === undefined) sqliteAlone.at0 = await sqliteCeiling(dbPath, createsPerCommit.sqlite)
    }
    if (!only.has('sqlite-1m')) return
    log(`seeding ${SEED_PETS.toLocaleString('en-US')} pets (and their events) with the service stopped …`)
    const seeded = seedSqlitePets(dbPath, BENCH_ACCOUNT, SEED_PETS)
    log(`seeded in ${seeded.seconds.toFixed(1)} s; ${seeded.total.toLocaleString('en-US')} pets in the table`)
    started = await startWithCredentials(databaseUrl, started.reuse)
    const { server, caps, creds } = started
    await serviceCases('sqlite-1m', ' @1M', server, databaseUrl, caps, creds, ['create', 'read', 'list'])
    await stop(started.server)
    sqliteAlone.at1m = await sqliteCeiling(dbPath, createsPerCommit['sqlite-1m'])
  } finally {
    await stop(started.server)
  }
}

/**
 * SQLite alone on the same file, the service stopped (bench/sqlite-ceiling.ts), its writes
 * committed `perCommit` to a commit, as the service's create case did.
 */
async function sqliteCeiling(
  dbPath: string,
  perCommit: number | undefined,
): Promise<Record<string, number> | undefined> {
  try {
    const out = await runNode(
      [
        '--import',
        'tsx',
        join(ROOT, 'bench', 'sqlite-ceiling.ts'),
        dbPath,
        BENCH_ACCOUNT,
        args.quick ? '0.5' : '1',
        ...(perCommit === undefined ? [] : [String(perCommit)]),
      ],
      {},
    )
    const result = JSON.parse(out) as Record<string, number>
    log(
      `SQLite alone, CPU µs per operation: ${Object.entries(result)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ')}`,
    )
    return result
  } catch (error) {
    log(`SQLite alone: failed (${error instanceof Error ? error.message.split('\n')[0] : error})`)
    return undefined
  }
}

/** PostgreSQL: a fresh database on the local server (or BENCH_POSTGRES_URL), dropped afterwards. */
async function postgresGroup(): Promise<void> {
  if (!only.has('postgres')) return
  const fromEnv = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? fromEnv ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 })
  const skipped = (reason: string) =>
    runCase(
      {
        id: 'postgres.create',
        label: 'create (PostgreSQL)',
        group: 'postgres',
        request: 'POST /v1/pet',
        skipped: reason,
      },
      async () => reason,
    )
  try {
    await admin.connect()
  } catch (error) {
    await skipped(
      `no PostgreSQL answers at ${new URL(adminUrl).host} (${error instanceof Error ? error.message : error})`,
    )
    return
  }
  const name = `pet_bench_${process.pid}_${Date.now()}`
  let server: ServerProcess | undefined
  postgresPid = await postmasterPid(admin)
  try {
    await admin.query(`create database ${name}`)
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    const databaseUrl = url.toString()
    const started = await startWithCredentials(databaseUrl)
    server = started.server
    await serviceCases('postgres', ' (PostgreSQL)', server, databaseUrl, started.caps, started.creds, [
      'create',
      'create-keyed',
      'create-webhook',
      'read',
      'update',
    ])
    await stop(server)
    if (wanted('create-2-workers')) await twoWorkersCase('postgres', databaseUrl, started.reuse)
    if (wanted('create-no-logs')) await requestLogsCase('postgres', databaseUrl, started.reuse)
    if (wanted('peer')) await peerCase('insert', 'postgres', databaseUrl)
    if (wanted('orm-peer')) await peerCase('orm', 'postgres', databaseUrl)
  } finally {
    postgresPid = undefined
    await stop(server)
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => {})
    await admin.end()
  }
}

/** The postmaster of the server `client` is connected to (its backend's parent), if it runs here. */
async function postmasterPid(client: pg.Client): Promise<number | undefined> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
  const backend = rows[0]?.pid
  return backend === undefined ? undefined : parentPid(backend, 'postgres')
}

async function jsonServerGroup(): Promise<void> {
  if (!only.has('json-server')) return
  const bin = join(ROOT, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js')
  for (const count of [0, JSON_SERVER_SEED]) {
    const file = join(work, `json-server-${count}.json`)
    writeJsonServerDb(file, count)
    const port = await freePort()
    const label = count === 0 ? 'json-server create, empty' : `json-server create @${count / 1000}k`
    let server: ServerProcess | undefined
    try {
      server = await track(
        startProcess({
          name: 'json-server',
          args: [bin, '--host', '127.0.0.1', '--port', String(port), '--quiet', file],
          env: { NODE_ENV: 'production' },
          port,
          readyPath: '/pets?_limit=1',
        }),
      )
      const target = server
      await runCase(
        {
          id: `json-server.create-${count}`,
          label,
          group: 'json-server',
          request: 'POST /pets (form)',
          petsBefore: count,
        },
        // At 50k pets each create rewrites a ~10 MB file: a round must last many answers
        // long, and a warm-up would only leave a queue behind.
        () =>
          run(
            target,
            createRequests('', '/pets'),
            '/pets?_limit=1',
            count === 0 ? {} : { warmupSeconds: 0, seconds: args.quick ? 6 : 10, rounds: args.quick ? 1 : 2 },
          ),
      )
    } finally {
      await stop(server)
    }
  }
}

function machine(): Report['machine'] {
  const model = cpus()[0]?.model ?? 'unknown'
  return {
    cpus: cpus().length,
    cpuModel: model.trim(),
    node: process.versions.node,
    os: `${process.platform} ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
  }
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
}

const TARGETS: Record<string, number> = {
  'sqlite.create': 0.2,
  'sqlite.read': 0.5,
  'sqlite.update': 0.2,
  'sqlite.list': 0.3,
  'postgres.create': 0.1,
  'postgres.read': 0.25,
}

/** The ORM peer only creates: every create case of the service is held to this ratio to it. */
const ORM_PEER_TARGET = 1.5
/** The create against the hand-written single insert on its database. */
const PEER_TARGET = 0.5
/** CPU µs of SQLite's own work for one create, as the service commits it (bench/sqlite-ceiling.ts). */
const SQLITE_CREATE_CEILING_US = 30
const databaseOf = (group: Group): 'sqlite' | 'postgres' | undefined =>
  group === 'postgres' ? 'postgres' : group === 'sqlite' || group === 'sqlite-1m' ? 'sqlite' : undefined

/**
 * A create case's ratio ÷ the ORM peer's on the same database, each against the bare rounds
 * paired with it, so that the machine's drift cancels out. The webhook case's own bare rounds
 * ran beside its worker catching up: its ratio is the plain create's times its pairs' median.
 */
function versusOrmPeer(c: CaseRecord): number | undefined {
  if (!/\.create(-keyed|-webhook|-2-workers)?$/.test(c.id) || c.ratio === undefined) return undefined
  const database = databaseOf(c.group)
  if (database === undefined) return undefined
  const peer = cases.find((p) => p.id === `${database}.orm-peer-create`)?.ratio
  if (peer === undefined) return undefined
  if (!c.id.endsWith('.create-webhook')) return c.ratio / peer
  const create = cases.find((p) => p.id === `${c.group}.create`)?.ratio
  return create === undefined || c.versus === undefined ? undefined : (create * c.versus.ratio) / peer
}

function checks(): Check[] {
  const byId = new Map(cases.map((c) => [c.id, c]))
  const ran = (id: string) => {
    const c = byId.get(id)
    return c?.rps === undefined ? undefined : c
  }
  const out: Check[] = []
  const ratio = (n: number | undefined) => (n === undefined ? 'not measured' : `${n.toFixed(3)}×`)
  for (const [id, target] of Object.entries(TARGETS)) {
    const c = ran(id)
    out.push({
      name: `${byId.get(id)?.label ?? id} vs bare`,
      target: `≥ ${target}×`,
      value: ratio(c?.ratio),
      met: c?.ratio === undefined ? null : c.ratio >= target,
    })
  }
  const service = cases.filter(
    (c) => ['sqlite', 'sqlite-1m', 'postgres'].includes(c.group) && c.rps !== undefined && !isPeer(c),
  )
  const worstP99 = service.reduce<CaseRecord | undefined>(
    (w, c) => (w === undefined || (c.p99Ms ?? 0) > (w.p99Ms ?? 0) ? c : w),
    undefined,
  )
  out.push({
    name: 'p99 at 50 connections (worst service case)',
    target: '≤ 10 ms',
    value: worstP99 === undefined ? 'not measured' : `${worstP99.p99Ms?.toFixed(2)} ms (${worstP99.label})`,
    met: worstP99 === undefined ? null : (worstP99.p99Ms ?? 0) <= 10,
  })
  const postgresCreate = ran('postgres.create')
  out.push({
    name: 'p99 of create (PostgreSQL) at 50 connections',
    target: '≤ 15 ms',
    value: postgresCreate === undefined ? 'not measured' : `${postgresCreate.p99Ms?.toFixed(2)} ms`,
    met: postgresCreate === undefined ? null : (postgresCreate.p99Ms ?? 0) <= 15,
  })
  for (const group of ['sqlite', 'postgres']) {
    const create = ran(`${group}.create`)
    const keyed = ran(`${group}.create-keyed`)
    const value =
      create?.ratio !== undefined && keyed?.ratio !== undefined ? keyed.ratio / create.ratio : undefined
    out.push({
      name: `create with an Idempotency-Key vs without${group === 'postgres' ? ' (PostgreSQL)' : ''}`,
      target: 'for information',
      value:
        value === undefined
          ? 'not measured'
          : `${ratio(value)} (${keyed?.cpuUsPerRequest?.toFixed(0)} vs ${create?.cpuUsPerRequest?.toFixed(0)} µs CPU/request)`,
      met: null,
    })
  }
  // Per process: the 2-worker cases' figure is the sum of three processes.
  const single = service.filter((c) => !c.id.endsWith('.create-2-workers'))
  const peak = Math.max(0, ...single.map((c) => c.peakRssMb ?? 0))
  out.push({
    name: 'peak RSS of the service (one process)',
    target: '≤ 200 MB',
    value: single.length ? `${peak.toFixed(0)} MB` : 'not measured',
    met: single.length ? peak <= 200 : null,
  })
  for (const kind of ['create', 'read', 'list']) {
    const at0 = ran(`sqlite.${kind}`)
    const at1m = ran(`sqlite-1m.${kind}`)
    const value = at0 && at1m ? (at1m.rps ?? 0) / (at0.rps ?? 1) : undefined
    out.push({
      name: `${kind} at 1M pets vs at 0`,
      target: '≥ 0.85×',
      value: ratio(value),
      met: value === undefined ? null : value >= 0.85,
    })
  }
  const create = ran('sqlite.create')
  for (const [count, target] of [
    [0, 25],
    [JSON_SERVER_SEED, 200],
  ] as const) {
    const peer = ran(`json-server.create-${count}`)
    const value = create && peer ? (create.rps ?? 0) / (peer.rps ?? 1) : undefined
    out.push({
      name: `create vs json-server ${count === 0 ? 'on an empty file' : `at ${count / 1000}k pets`}`,
      target: `≥ ${target}×`,
      value: value === undefined ? 'not measured' : `${value.toFixed(1)}×`,
      met: value === undefined ? null : value >= target,
    })
  }
  for (const group of ['sqlite', 'postgres']) {
    // Round against round, the endpoint enabled and disabled in turn on one server (see
    // createWithWebhook): not against the bare rounds, which the worker slows as it catches up.
    const withWebhook = ran(`${group}.create-webhook`)
    const versus = withWebhook?.versus
    const value = versus?.ratio
    const detail =
      versus === undefined
        ? ''
        : ` (median of ${withWebhook?.rounds?.length} pairs; ${withWebhook?.rps?.toFixed(0)} vs ${versus.rps.toFixed(0)} req/s, ${withWebhook?.cpuUsPerRequest?.toFixed(0)} vs ${versus.cpuUsPerRequest.toFixed(0)} µs CPU/request)`
    out.push({
      name: `create with one webhook endpoint vs without${group === 'postgres' ? ' (PostgreSQL)' : ''}`,
      target: '≥ 0.90×',
      value: `${ratio(value)}${detail}`,
      met: value === undefined ? null : value >= 0.9,
    })
    // Round against round, two services (logs on, logs off) in turn: see requestLogsCase.
    const logsPair = ran(`${group}.create-no-logs`)
    const logsVersus = logsPair?.versus
    out.push({
      name: `create with request logs vs REQUEST_LOGS=false${group === 'postgres' ? ' (PostgreSQL)' : ''}`,
      target: '≥ 0.90×',
      value:
        logsVersus === undefined
          ? 'not measured'
          : `${ratio(logsVersus.ratio)} (median of ${logsPair?.rounds?.length} pairs; ${logsPair?.rps?.toFixed(0)} vs ${logsVersus.rps.toFixed(0)} req/s, ${logsPair?.cpuUsPerRequest?.toFixed(0)} vs ${logsVersus.cpuUsPerRequest.toFixed(0)} µs CPU/request)`,
      met: logsVersus === undefined ? null : logsVersus.ratio >= 0.9,
    })
    const hooks = withWebhook?.webhooks
    out.push({
      name: `webhook deliveries while creates saturate the service, then the drain with no load${group === 'postgres' ? ' (PostgreSQL)' : ''}`,
      target: 'for information',
      value:
        hooks === undefined
          ? 'not measured'
          : `${hooks.deliveredPerSecond.toFixed(0)}/s of ${hooks.eventsPerSecond.toFixed(0)} events/s; ${hooks.drained} in ${hooks.drainSeconds.toFixed(1)} s (${(hooks.drained / Math.max(0.001, hooks.drainSeconds)).toFixed(0)}/s)`,
      met: null,
    })
  }
  for (const group of ['sqlite', 'postgres']) {
    const on = group === 'postgres' ? ' (PostgreSQL)' : ''
    const create = ran(`${group}.create`)
    const peer = ran(`${group}.peer-create`)
    // Each against the bare rounds paired with it, so that the machine's drift cancels out.
    const value =
      create?.ratio !== undefined && peer?.ratio !== undefined ? create.ratio / peer.ratio : undefined
    out.push({
      name: `create vs hand-written Fastify + ${group === 'sqlite' ? 'better-sqlite3' : 'pg Pool'} insert${on}`,
      target: `≥ ${PEER_TARGET}×`,
      value: ratio(value),
      met: value === undefined ? null : value >= PEER_TARGET,
    })
    const cpu =
      create?.cpuUsPerRequest && peer?.cpuUsPerRequest
        ? peer.cpuUsPerRequest / create.cpuUsPerRequest
        : undefined
    out.push({
      name: `create vs the same peer in CPU per request (its µs ÷ ours)${on}`,
      target: 'for information',
      value: ratio(cpu),
      met: null,
    })
    if (group === 'postgres') {
      const server =
        create?.databaseCpuUsPerRequest && peer?.databaseCpuUsPerRequest
          ? peer.databaseCpuUsPerRequest / create.databaseCpuUsPerRequest
          : undefined
      out.push({
        name: `create vs the same peer in PostgreSQL's CPU per request (its µs ÷ ours)`,
        target: 'for information',
        value:
          server === undefined
            ? 'not measured'
            : `${ratio(server)} (${peer?.databaseCpuUsPerRequest?.toFixed(0)} vs ${create?.databaseCpuUsPerRequest?.toFixed(0)} µs)`,
        met: null,
      })
    }
    const orm = ran(`${group}.orm-peer-create`)
    const versusOrm = cases.flatMap((c) =>
      c.ormPeerRatio !== undefined && databaseOf(c.group) === group
        ? [{ label: c.label, value: c.ormPeerRatio }]
        : [],
    )
    const worst = versusOrm.reduce<(typeof versusOrm)[number] | undefined>(
      (w, c) => (w === undefined || c.value < w.value ? c : w),
      undefined,
    )
    out.push({
      name: `every create of the service vs Fastify + Drizzle ORM (key, pet and event)${on}`,
      target: `≥ ${ORM_PEER_TARGET}×`,
      value:
        worst === undefined
          ? 'not measured'
          : `${ratio(worst.value)} at worst (${worst.label}; ${versusOrm.length} cases)`,
      met: worst === undefined ? null : worst.value >= ORM_PEER_TARGET,
    })
    const ormCpu =
      create?.cpuUsPerRequest && orm?.cpuUsPerRequest
        ? orm.cpuUsPerRequest / create.cpuUsPerRequest
        : undefined
    out.push({
      name: `create vs the ORM peer in CPU per request (its µs ÷ ours)${on}`,
      target: 'for information',
      value: ratio(ormCpu),
      met: null,
    })
    const two = ran(`${group}.create-2-workers`)
    const scaling =
      create?.ratio !== undefined && two?.ratio !== undefined ? two.ratio / create.ratio : undefined
    out.push({
      name: `create with 2 workers vs 1${on} (${cpus().length} cores)`,
      target: 'for information',
      value: ratio(scaling),
      met: null,
    })
  }
  const alone = [sqliteAlone.at0?.create, sqliteAlone.at1m?.create]
  out.push({
    name: 'SQLite statements of one create, as the service commits them, at 0 and at 1M pets',
    target: `≤ ${SQLITE_CREATE_CEILING_US} µs`,
    value: alone.map((us) => (us === undefined ? 'not measured' : `${us.toFixed(1)} µs`)).join(' and '),
    met: alone.includes(undefined) ? null : alone.every((us) => (us ?? 0) <= SQLITE_CREATE_CEILING_US),
  })
  const errors = service.reduce((sum, c) => sum + (c.errors ?? 0), 0)
  out.push({
    name: 'errors of the service (socket errors, timeouts, non-2xx), all cases',
    target: '0',
    value: String(errors),
    met: errors === 0,
  })
  return out
}

async function main(): Promise<void> {
  log(
    `bench (${mode}): warm-up ${timing.warmupSeconds} s, then ${timing.rounds} × ${timing.seconds} s per case at ${CONNECTIONS} connections; work dir ${work}`,
  )
  buildService()
  const load = loadavg()
  bare = await track(startBare())
  await measureBare()
  await sqliteGroups()
  await postgresGroup()
  await jsonServerGroup()
  await stop(bare)

  const bareRps = median(bareSamples)
  for (const c of cases) {
    const target = TARGETS[c.id]
    if (target !== undefined) c.targetRatio = target
    const versusOrm = versusOrmPeer(c)
    if (versusOrm !== undefined) c.ormPeerRatio = versusOrm
  }
  const report: Report = {
    date: new Date().toISOString(),
    mode,
    commit: gitCommit(),
    machine: machine(),
    timing: { ...timing, connections: CONNECTIONS },
    bare: { rps: bareRps, samples: bareSamples, cpuUsPerRequest: median(bareCpuSamples) },
    loadAverage: { start: load, end: loadavg() },
    cases,
    sqliteAlone,
    checks: checks(),
    totalSeconds: Math.round((Date.now() - startedAt) / 1000),
  }
  mkdirSync(args.out, { recursive: true })
  writeFileSync(join(args.out, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(join(args.out, 'chart.svg'), svgChart(report))
  const markdown = markdownReport(report)
  writeFileSync(join(args.out, 'latest.md'), `${markdown}\n`)
  process.stdout.write(
    `\n${markdown}\n\nbare node:http: ${bareRps.toFixed(0)} req/s (median of ${bareSamples.length} rounds); load average ${load.map((l) => l.toFixed(1)).join(' ')} at the start\n`,
  )
  log(`wrote ${join(args.out, 'latest.json')}, chart.svg and latest.md`)
  const errors = cases.some((c) => (c.errors ?? 0) > 0 || c.failed !== undefined)
  if (errors) process.exitCode = 1
}

async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()))
  rmSync(work, { recursive: true, force: true })
}

process.once('SIGINT', () => {
  cleanUp().finally(() => process.exit(130))
})
main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(cleanUp)
