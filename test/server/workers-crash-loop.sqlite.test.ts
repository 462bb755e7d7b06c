import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import {
  childPids,
  logLines,
  PET_SERVICE_BIN,
  REPO_ROOT,
  readyWorkers,
  runPetService,
  type ServerProcess,
  startServerProcess,
} from '../helpers/cli.ts'
import { waitUntil } from '../helpers/poll.ts'
import { call } from '../helpers/server-http.ts'

// SQLite only: the primary's supervision, not the database, is under test.
it('refuses a --workers that is not a number from 1 to 1024 or auto, with exit code 2 and why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  try {
    const result = await runPetService(['serve', '--workers', 'zero'], {
      DATABASE_URL: `sqlite:${join(dir, 'never.db')}`,
    })
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain('--workers="zero" must be a whole number from 1 to 1024, or auto')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/** `serve --workers 2` as a child process, its output collected, until it exits. */
function serveWorkers(dir: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [PET_SERVICE_BIN, 'serve', '--workers', '2'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dir, 'crash.db')}`,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
  const lines = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; worker?: number })
  return { child, exited, output: () => out, lines }
}

it('gives up and exits 1 when its workers keep dying at start, without restarting them for ever', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  const server = serveWorkers(dir, {})
  // Every worker dies as soon as it appears, as one that cannot start does.
  const killed = new Set<number>()
  const killer = setInterval(() => {
    if (server.child.exitCode !== null) return
    for (const pid of childPids(server.child.pid!)) {
      if (killed.has(pid)) continue
      killed.add(pid)
      process.kill(pid, 'SIGKILL')
    }
  }, 50)
  try {
    const code = await server.exited
    expect(code, server.output().slice(-3000)).toBe(1)
    const lines = server.lines()
    expect(lines.some((l) => /^worker \d died 5 times in a row; stopping$/.test(l.msg))).toBe(true)
    expect(
      lines.filter((l) => /exited; starting another in \d+ ms/.test(l.msg)).length,
    ).toBeGreaterThanOrEqual(4)
    expect(lines.at(-1)?.msg).toBe('all workers have exited')
  } finally {
    clearInterval(killer)
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)

it('exits 1 at once when its port is taken, saying so, without starting a worker', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  // Another program holds the port.
  const squatter = createServer()
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve))
  const { port } = squatter.address() as { port: number }
  try {
    const server = serveWorkers(dir, { PORT: String(port) })
    expect(await server.exited, server.output().slice(-3000)).toBe(1)
    expect(server.output()).toContain(`127.0.0.1:${port} is already in use`)
    expect(server.lines().some((l) => l.msg.startsWith('started'))).toBe(false)
  } finally {
    squatter.close()
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)

/** `serve --workers 2` on a database of its own, once both workers are ready. */
async function twoWorkers(dir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServerProcess(
    PET_SERVICE_BIN,
    { DATABASE_URL: `sqlite:${join(dir, 'workers.db')}`, SHUTDOWN_DRAIN_SECONDS: '0.5', ...env },
    { args: ['--workers', '2'] },
  )
  await waitUntil('both workers are ready', async () => readyWorkers(server).length === 2, 120_000)
  return server
}

it('exits 0 on a SIGTERM that comes while a worker is starting', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  const server = await twoWorkers(dir)
  try {
    const workers = new Set(readyWorkers(server).map((l) => l.pid))
    process.kill([...workers][0]!, 'SIGKILL')
    // Its replacement is forked (a new child), and takes seconds to start: stop now.
    await waitUntil('the replacement is forked', async () =>
      childPids(server.child.pid!).some((pid) => !workers.has(pid)),
    )
    expect(readyWorkers(server)).toHaveLength(2)
    server.child.kill('SIGTERM')
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    expect(logLines(server).at(-1)?.msg).toBe('all workers have exited')
  } finally {
    server.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)

it('drains its workers once when SIGINT and SIGTERM reach it together (Ctrl-C under npm start), and exits 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  const server = await twoWorkers(dir)
  try {
    server.child.kill('SIGINT')
    await waitUntil('the primary stops the workers', async () =>
      logLines(server).some((l) => l.msg === 'stopping the workers'),
    )
    server.child.kill('SIGTERM')
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    const lines = logLines(server)
    expect(lines.filter((l) => l.msg === 'shutting down: not ready, draining')).toHaveLength(2)
    expect(lines.some((l) => l.msg === 'stopping the workers now')).toBe(false)
  } finally {
    server.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)

it('keeps its port open while every worker is being replaced: a connection made meanwhile waits, and is answered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  const server = await twoWorkers(dir, { HTTP_HEADERS_TIMEOUT_SECONDS: '1' })
  try {
    for (const { pid } of readyWorkers(server)) process.kill(pid, 'SIGKILL')
    await waitUntil(
      'both workers have died',
      async () => logLines(server).filter((l) => /exited; starting another/.test(l.msg)).length === 2,
    )
    // No worker serves now: their replacements take seconds to start.
    expect(readyWorkers(server)).toHaveLength(2)
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(server.port, '/healthz')))
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
    expect(readyWorkers(server).length).toBeGreaterThan(2)

    // The workers time out a client that is slow to send its headers, as a single process does.
    const slow = connect(server.port, '127.0.0.1')
    let answer = ''
    slow.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    slow.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    await waitUntil('the slow client is answered', async () => answer.includes('\r\n\r\n'))
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    slow.destroy()
  } finally {
    server.child.kill('SIGTERM')
    await server.exited
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)
