import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './cli.ts'
import { waitUntil } from './poll.ts'
import { POSTGRES_URL } from './postgres.ts'

export interface PgBouncer {
  /** The test database through PgBouncer (the user and database of TEST_POSTGRES_URL). */
  url: string
  /** Everything PgBouncer has logged so far. */
  output(): string
  stop(): Promise<void>
}

/** Debian's package installs it in /usr/sbin, which is not on every user's PATH. */
export const PGBOUNCER_BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(existsSync)

/**
 * A PgBouncer in front of the test PostgreSQL server, in `mode`, with its defaults otherwise
 * (in particular no `ignore_startup_parameters`): any database name, any role of the server
 * (looked up with `auth_query` as the URL's user, trust authentication as on the test server).
 * PgBouncer refuses to run as root: as root it runs as `postgres`.
 */
export async function startPgBouncer(options: {
  mode: 'session' | 'transaction'
  poolSize?: number
  /** More settings of its `[pgbouncer]` section (`server_round_robin: '1'`). */
  settings?: Record<string, string>
}): Promise<PgBouncer> {
  if (PGBOUNCER_BINARY === undefined)
    throw new Error('PgBouncer is not installed (apt-get install pgbouncer)')
  const server = new URL(POSTGRES_URL)
  const user = decodeURIComponent(server.username) || 'postgres'
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'))
  const ini = join(dir, 'pgbouncer.ini')
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`)
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `auth_user = ${user}`,
      `pool_mode = ${options.mode}`,
      `default_pool_size = ${options.poolSize ?? 5}`,
      'max_client_conn = 2000',
      // Each test file connects as a role of its own, so as a pool of its own: close a
      // finished file's server connections soon.
      'server_idle_timeout = 5',
      ...Object.entries(options.settings ?? {}).map(([name, value]) => `${name} = ${value}`),
      '',
    ].join('\n'),
  )
  const runAs = process.getuid?.() === 0 ? postgresUser() : undefined
  if (runAs !== undefined)
    for (const file of [dir, ini, join(dir, 'users.txt')]) chownSync(file, runAs.uid, runAs.gid)
  const child: ChildProcess = spawn(PGBOUNCER_BINARY, [ini], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(runAs ?? {}),
  })
  let output = ''
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString()
  })
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString()
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const url = new URL(POSTGRES_URL)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitUntil('PgBouncer accepts connections', async () => {
      if (child.exitCode !== null) throw new Error(`PgBouncer exited: ${output}`)
      const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 1000 })
      try {
        await client.connect()
        await client.query('select 1')
        return true
      } catch {
        return false
      } finally {
        await client.end().catch(() => {})
      }
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url: url.toString(), output: () => output, stop }
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}
