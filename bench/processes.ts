import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** A server under test, running in a process of its own. */
export interface ServerProcess {
  name: string
  url: string
  pid: number
  child: ChildProcess
  /** The service's Prometheus listener, http://HOST:PORT/metrics. */
  metricsUrl?: string
  /** What the process wrote to stderr (kept short): shown when it fails. */
  stderr(): string
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts `node ARGS` with the given environment and waits until `readyPath` answers 200.
 * Node runs directly (no npm or shell in between) so the pid is the server's own, for RSS.
 */
export async function startProcess(options: {
  name: string
  args: string[]
  env: Record<string, string>
  port: number
  readyPath: string
  cwd?: string
  timeoutMs?: number
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = `http://127.0.0.1:${options.port}`
  const server: ServerProcess = {
    name: options.name,
    url,
    pid: child.pid ?? -1,
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const killed = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)])
      if (!killed) {
        child.kill('SIGKILL')
        await exited
      }
    },
  }
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${options.name} exited with code ${child.exitCode} before it was ready:\n${stderr}`)
    }
    try {
      const response = await fetch(url + options.readyPath)
      await response.arrayBuffer()
      if (response.ok) return server
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  await server.stop()
  throw new Error(`${options.name} did not answer ${options.readyPath} within the time allowed:\n${stderr}`)
}

/** Runs `node ARGS` to completion and returns its stdout; throws with stderr on failure. */
export async function runNode(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c
  })
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) {
    const reason = `${err}${out}`.trim().split('\n')[0] ?? ''
    throw new Error(
      `\`${args.map((a) => a.replace(/^.*\/bin\//, '')).join(' ')}\` exited with ${code}: ${reason}`,
    )
  }
  return out
}

function statusField(pid: number, field: string): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

/**
 * A process and all its descendants (a cluster's primary and its workers), from Linux's
 * per-thread `children` lists; just the process where those are not available.
 */
export function processTree(pid: number): number[] {
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) {
    const parent = tree[i]!
    let tasks: string[] = []
    try {
      tasks = readdirSync(`/proc/${parent}/task`)
    } catch {
      continue
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim()
        if (children !== '') tree.push(...children.split(' ').map(Number))
      } catch {
        // the thread ended, or the kernel keeps no such list
      }
    }
  }
  return tree
}

/**
 * The parent of process `pid` when `pid` is a process of this machine named `command` (a
 * remote server's backend may share its number with an unrelated local process); else undefined.
 */
export function parentPid(pid: number, command: string): number | undefined {
  try {
    if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== command) return undefined
    const parent = /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return parent === undefined ? undefined : Number(parent)
  } catch {
    return undefined
  }
}

/**
 * Peak resident memory of a process (with its descendants, summed) during a stretch of time.
 * Linux keeps each process's peak in VmHWM; writing 5 to clear_refs resets it (our own child,
 * so we may), which gives a peak per case. Sampling VmRSS as well covers kernels where the reset
 * is not allowed, and is what counts for several processes (their peaks need not coincide).
 */
export class RssMonitor {
  #peak = 0
  #timer: NodeJS.Timeout | undefined
  #pids: number[] = []

  constructor(private readonly pid: number) {}

  #sum(field: string): number {
    return this.#pids.reduce((sum, pid) => sum + (statusField(pid, field) ?? 0), 0)
  }

  start(): void {
    this.#pids = processTree(this.pid)
    for (const pid of this.#pids) {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5')
      } catch {
        // not permitted: the sampled VmRSS alone then tells the peak
      }
    }
    this.#peak = this.#sum('VmRSS')
    this.#timer = setInterval(() => {
      this.#peak = Math.max(this.#peak, this.#sum('VmRSS'))
    }, 50)
  }

  /** Peak RSS in bytes since start(). */
  stop(): number {
    clearInterval(this.#timer)
    return this.#pids.length === 1 ? Math.max(this.#peak, this.#sum('VmHWM')) : this.#peak
  }
}

/**
 * CPU time (user + system) a process and its living descendants have used so far, in
 * microseconds; 0 if unknown.
 */
export function cpuTimeUs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + ownCpuTimeUs(p), 0)
}

function ownCpuTimeUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return (ticks * 1_000_000) / CLOCK_TICKS
  } catch {
    return 0
  }
}

/** USER_HZ: 100 on every Linux we run on. */
const CLOCK_TICKS = 100
