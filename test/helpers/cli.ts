import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const PET_SERVICE_BIN = fileURLToPath(new URL('../../bin/pet-service.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a Node script (a bin of this repository) as a child process, the way a user would. */
export function runNodeScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    // Standard input is a pipe, not a terminal: what `input` holds, then its end.
    child.stdin.end(input)
  })
}

/** Runs `pet-service ARGS` as a child process, the way an operator would. */
export function runPetService(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  return runNodeScript(PET_SERVICE_BIN, args, { LOG_LEVEL: 'warn', ...env }, input)
}

export interface ServerProcess {
  child: ChildProcess
  port: number
  exited: Promise<number | null>
  /** Everything the process has written so far, stdout and stderr interleaved (its logs). */
  output(): string
}

/**
 * Starts `SCRIPT serve` on a free port (PORT=0) and resolves once it says where it listens.
 * `cwd`: the working directory (the repository root unless given), as a separate machine would have;
 * `args`: after `serve` (`--workers 2`).
 * Metrics are off unless asked for: servers of several test files run at once, and would all
 * want the default metrics port.
 */
export function startServerProcess(
  script: string,
  env: Record<string, string>,
  options: { cwd?: string; args?: string[] } = {},
): Promise<ServerProcess> {
  // Serving on PostgreSQL takes a PUBLIC_URL (one OAuth issuer for every instance).
  const publicUrl = env.DATABASE_URL?.startsWith('postgres') ? { PUBLIC_URL: 'http://127.0.0.1' } : {}
  const child = spawn(process.execPath, [script, 'serve', ...(options.args ?? [])], {
    cwd: options.cwd ?? REPO_ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      ...publicUrl,
      ...env,
    },
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match) resolve({ child, port: Number(match[1]), exited, output: () => out })
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${out}`)))
  })
}

/** A TCP port free on loopback right now (for a listener the test cannot ask to pick its own). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A JSON log line of the service (a worker's pino line, or one of the primary's). */
export interface LogLine {
  pid: number
  msg: string
  method?: string
  url?: string
  worker?: number
  background_jobs?: boolean
}

/** The JSON log lines a server process has written so far. */
export function logLines(server: ServerProcess): LogLine[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
}

/** The processes a process has started (Linux: each of its threads' `children` list). */
export function childPids(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter((p) => p !== '')
      .map(Number),
  )
}

/** The workers (of `serve --workers N`) that have said they are ready, in order. */
export const readyWorkers = (server: ServerProcess) =>
  logLines(server).filter((l) => l.msg === 'pet-service ready')
