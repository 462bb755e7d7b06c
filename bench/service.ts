import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildSync } from 'esbuild'
import { NODE_BUNDLE } from '../scripts/bundle-options.ts'
import { freePort, runNode, type ServerProcess, startProcess } from './processes.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The sources through tsx (what the admin CLI runs): profiles name each source file. */
const BIN = fileURLToPath(new URL('../bin/pet-service.js', import.meta.url))

/**
 * What `npm start` runs after `node` (Node's flags, the bundle, `serve`), read from package.json so
 * that the bench measures exactly that.
 */
function npmStartArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string }
  }
  // `exec` makes the shell npm runs the script in become node, so signals reach the service.
  const [command, ...args] = scripts.start.replace(/^exec\s+/, '').split(/\s+/)
  if (command !== 'node') throw new Error(`npm start is not a plain node command: ${scripts.start}`)
  return args
}

/**
 * The peers' sources in bench/: the hand-written single insert, and the afternoon's service
 * through an ORM (key check, pet and event in one transaction).
 */
const PEERS = { insert: 'peer-server', orm: 'orm-peer-server' } as const
export type PeerKind = keyof typeof PEERS
const peerBundle = (kind: PeerKind): string =>
  fileURLToPath(new URL(`../dist/bench-${PEERS[kind]}.js`, import.meta.url))

/** Builds dist/pet-service.js from the current sources, as `npm start` does; and the peers. */
export function buildService(): void {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: ROOT, stdio: 'inherit' })
  // The peers as plain JavaScript too, next to the bundle (so they find node_modules): through
  // tsx's loader their RSS would carry ~50 MB the service's bundle does not.
  buildSync({
    entryPoints: Object.values(PEERS).map((name) => fileURLToPath(new URL(`./${name}.ts`, import.meta.url))),
    outdir: fileURLToPath(new URL('../dist', import.meta.url)),
    entryNames: 'bench-[name]',
    ...NODE_BUNDLE,
  })
}

export const BENCH_ACCOUNT = 'bench@example.com'

/**
 * Production settings, except the rate limit (off, or it would be what we measure) and the log
 * level (warn: the request log line's own cost is measured apart, see bench/README.md). Metrics stay
 * on, as in production, each server on a free port of its own (several run at once). PUBLIC_URL,
 * which serving on PostgreSQL requires, is where the bench reaches the server.
 */
export function serviceEnv(databaseUrl: string, port: number, metricsPort: number): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    RATE_LIMIT_RPS: '0',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    // The webhook case delivers to a receiver on loopback.
    WEBHOOKS_ALLOW_INSECURE: 'true',
  }
}

/**
 * The service the way `npm start` runs it (call buildService() first), or from the sources
 * through tsx (`from: 'sources'`), for profiles that name each source file.
 */
export async function startService(
  databaseUrl: string,
  options: {
    nodeArgs?: string[]
    from?: 'bundle' | 'sources'
    env?: Record<string, string>
    /** After `serve`: `--workers 2`, say. */
    serveArgs?: string[]
  } = {},
): Promise<ServerProcess> {
  const port = await freePort()
  let metricsPort = await freePort()
  while (metricsPort === port) metricsPort = await freePort()
  const server = await startProcess({
    name: 'pet-service',
    args: [
      ...(options.nodeArgs ?? []),
      ...(options.from === 'sources' ? [BIN, 'serve'] : npmStartArgs()),
      ...(options.serveArgs ?? []),
    ],
    env: { ...serviceEnv(databaseUrl, port, metricsPort), ...options.env },
    port,
    readyPath: '/readyz',
    cwd: ROOT,
  })
  server.metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
  return server
}

/** The bare node:http reference, same Node and loader as the service. */
export async function startBare(): Promise<ServerProcess> {
  const port = await freePort()
  return startProcess({
    name: 'bare node:http',
    args: ['--import', 'tsx', fileURLToPath(new URL('./bare-server.ts', import.meta.url))],
    env: { NODE_ENV: 'production', PORT: String(port) },
    port,
    readyPath: '/',
    cwd: ROOT,
  })
}

/**
 * A peer (built by buildService()) on SQLite (`target` is its file) or PostgreSQL (`target` is
 * the database URL); `env` adds to its environment (the ORM peer's SEED_API_KEY).
 */
export async function startPeer(
  kind: PeerKind,
  mode: 'sqlite' | 'postgres',
  target: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort()
  return startProcess({
    name: `${PEERS[kind]} (${mode})`,
    args: [peerBundle(kind), mode],
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      ...(mode === 'sqlite' ? { DATABASE_PATH: target } : { DATABASE_URL: target }),
      ...env,
    },
    port,
    readyPath: '/healthz',
    cwd: ROOT,
  })
}

export async function adminCli(databaseUrl: string, args: string[]): Promise<string> {
  return runNode([BIN, ...args], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' })
}

/** An unrestricted API key of the bench account, made with the admin CLI. */
export async function createApiKey(databaseUrl: string): Promise<string> {
  // Only migrate (and serve) create a database that does not exist yet.
  await adminCli(databaseUrl, ['migrate'])
  const out = await adminCli(databaseUrl, ['keys', 'create', '--account', BENCH_ACCOUNT, '--json'])
  const parsed = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { api_key?: string }
  if (parsed.api_key === undefined) throw new Error(`keys create printed no api_key: ${out}`)
  return parsed.api_key
}

export function basicAuth(user: string, password = ''): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

/** Which of the endpoints the cases need the running service offers (from its OpenAPI). */
export interface Capabilities {
  v2Read: boolean
  v2Update: boolean
  oauthToken: boolean
}

export async function probeCapabilities(baseUrl: string): Promise<Capabilities> {
  const response = await fetch(`${baseUrl}/openapi.json`)
  const doc = response.ok
    ? ((await response.json()) as { paths?: Record<string, Record<string, unknown>> })
    : {}
  const paths = doc.paths ?? {}
  const v2Item = Object.entries(paths).find(([path]) => /^\/v2\/pet\/\{[^}]+\}$/.test(path))?.[1]
  const token = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  })
  await token.arrayBuffer()
  return {
    v2Read: v2Item?.get !== undefined,
    v2Update: paths['/v2/pet']?.put !== undefined,
    // Without credentials the endpoint answers 400/401; 404 means it is not there.
    oauthToken: token.status !== 404,
  }
}

export interface OAuthClient {
  clientId: string
  clientSecret: string
}

/**
 * An OAuth client of the bench account allowed to read and write pets, from the admin CLI: this
 * checkout's against `database` (a URL), or another build's (a function that runs it).
 */
export async function createOAuthClient(
  database: string | ((args: string[]) => Promise<string>),
): Promise<OAuthClient> {
  const run = typeof database === 'string' ? (args: string[]) => adminCli(database, args) : database
  const out = await run([
    'clients',
    'create',
    '--account',
    BENCH_ACCOUNT,
    '--scope',
    'read:pets write:pets',
    '--json',
  ])
  const client = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as {
    client_id?: string
    client_secret?: string
  }
  if (client.client_id === undefined || client.client_secret === undefined) {
    throw new Error(`clients create printed no client_id/client_secret: ${out}`)
  }
  return { clientId: client.client_id, clientSecret: client.client_secret }
}

/** An access token from the client-credentials grant; throws with the server's answer. */
export async function fetchBearerToken(baseUrl: string, client: OAuthClient): Promise<string> {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(encodeURIComponent(client.clientId), encodeURIComponent(client.clientSecret)),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read:pets write:pets' }).toString(),
  })
  const text = await response.text()
  const body = (text.startsWith('{') ? JSON.parse(text) : {}) as { access_token?: string }
  if (!response.ok || body.access_token === undefined) {
    throw new Error(`POST /oauth/token answered ${response.status}: ${text.slice(0, 300)}`)
  }
  return body.access_token
}

/** The newest pet id of the account (ids run from 1 in a fresh database). */
export async function newestPetId(baseUrl: string, authorization: string): Promise<number> {
  const response = await fetch(`${baseUrl}/v1/pet?limit=1`, { headers: { authorization } })
  const body = (await response.json()) as { data?: { id: number }[] }
  return body.data?.[0]?.id ?? 0
}
