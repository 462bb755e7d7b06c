import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT } from './cli.ts'
import { waitUntil } from './poll.ts'

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** A command left running (`cmd &` in a terminal of its own), stopped by the session's close. */
export interface BackgroundJob {
  output(): string
  /** Its exit status once it has ended by itself; undefined while it runs. */
  exited(): number | null | undefined
}

/** The variables bash defines itself, left out of the state carried from command to command. */
const BASH_OWN = execFileSync('bash', ['-c', 'compgen -v'], { env: {}, encoding: 'utf8' })

/** A command that never ends (a stream not run in the background) fails instead of hanging. */
const RUN_TIMEOUT_MS = 90_000

/**
 * A terminal session in the repository's folder, as a reader types into it: each `run` is a bash
 * of its own (`set -euo pipefail`) that starts with the variables, exported or not, that the runs
 * before it set, and `start` leaves a command running beside the next ones. `prelude` runs before
 * each command (shell functions the caller needs).
 */
export class ShellSession {
  private readonly dir = mkdtempSync(join(tmpdir(), 'shell-session-'))
  private readonly state = join(this.dir, 'state.sh')
  private readonly jobs: ChildProcess[] = []

  constructor(
    private readonly env: Record<string, string>,
    private readonly prelude = '',
  ) {
    writeFileSync(this.state, '')
    writeFileSync(join(this.dir, 'bash-own'), `${BASH_OWN}_\n`)
  }

  private script(code: string, save: boolean): string {
    const keep = `declare -p $(compgen -v | grep -vxF -f ${join(this.dir, 'bash-own')}) > ${this.state}.next`
    return [
      'set -euo pipefail',
      `source ${this.state}`,
      this.prelude,
      save ? `trap '${keep}; mv ${this.state}.next ${this.state}' EXIT` : '',
      code,
    ].join('\n')
  }

  /** Runs `code` to its end, `input` on its standard input; what it set carries to the next. */
  run(code: string, input?: string): Promise<Run> {
    return exec('bash', ['-c', this.script(code, true)], this.env, input === undefined ? '' : `${input}\n`)
  }

  /** Starts `code` and leaves it running, in a process group of its own. */
  start(code: string): BackgroundJob {
    const child = spawn('bash', ['-c', this.script(code, false)], {
      cwd: REPO_ROOT,
      env: this.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.jobs.push(child)
    let output = ''
    let exited: number | null | undefined
    const append = (d: Buffer) => {
      output += d.toString()
    }
    child.stdout!.on('data', append)
    child.stderr!.on('data', append)
    child.on('exit', (code) => {
      exited = code
    })
    return { output: () => output, exited: () => exited }
  }

  /** The session's exported variables, as a program it started would see them. */
  async environment(): Promise<Record<string, string>> {
    const run = await exec(
      'bash',
      ['-c', `source ${this.state}\nnode -e 'console.log(JSON.stringify(process.env))'`],
      this.env,
    )
    return JSON.parse(run.stdout) as Record<string, string>
  }

  /** Stops what `start` left running (Ctrl-C to each, then a kill), and forgets the session. */
  async close(): Promise<void> {
    for (const child of this.jobs) await stop(child)
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Runs a program in the repository's folder with exactly `env`; what it printed, and its status. */
export function exec(command: string, args: string[], env: Record<string, string>, input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })
}

/** Stops a background command and what it started (its process group). */
async function stop(child: ChildProcess): Promise<void> {
  const running = () => child.exitCode === null && child.signalCode === null
  if (!running()) return
  process.kill(-child.pid!, 'SIGTERM')
  try {
    await waitUntil('a background command stops', async () => !running(), 10_000)
  } catch {
    process.kill(-child.pid!, 'SIGKILL')
  }
}
