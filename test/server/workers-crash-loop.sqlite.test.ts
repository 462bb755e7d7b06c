import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { PET_SERVICE_BIN, REPO_ROOT, runPetService } from '../helpers/cli.ts'

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

it('gives up and exits 1 when its workers keep dying at start (the port is taken), without restarting them for ever', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-workers-'))
  // Another program holds the port: every worker's listen fails.
  const squatter = createServer()
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve))
  const { port } = squatter.address() as { port: number }
  try {
    const child = spawn(process.execPath, [PET_SERVICE_BIN, 'serve', '--workers', '2'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: `sqlite:${join(dir, 'crash.db')}`,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
      },
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
    expect(code, out.slice(-3000)).toBe(1)
    const lines = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; worker?: number })
    expect(lines.filter((l) => l.msg.includes('could not start')).length).toBeGreaterThanOrEqual(5)
    expect(lines.some((l) => /^worker \d died 5 times in a row; stopping$/.test(l.msg))).toBe(true)
    expect(
      lines.filter((l) => /exited; starting another in \d+ ms/.test(l.msg)).length,
    ).toBeGreaterThanOrEqual(4)
    expect(lines.at(-1)?.msg).toBe('all workers have exited')
  } finally {
    squatter.close()
    rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)
