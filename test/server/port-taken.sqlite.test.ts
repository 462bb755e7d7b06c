import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { PET_SERVICE_BIN, REPO_ROOT } from '../helpers/cli.ts'

// SQLite only: the listener, not the database, is under test.
it('exits 1 when its port is taken, saying which setting to change, rather than staying up without listening', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pet-service-port-'))
  const squatter = createServer()
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve))
  const { port } = squatter.address() as { port: number }
  try {
    const child = spawn(process.execPath, [PET_SERVICE_BIN, 'serve'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: `sqlite:${join(dir, 'port.db')}`,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: '0',
      },
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    // A process still there after a minute is the failure this test is about: stop it.
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
    clearTimeout(guard)
    expect(code, out.slice(-3000)).toBe(1)
    expect(out).toContain(`127.0.0.1:${port} is already in use`)
    expect(out).toMatch(/set PORT to a free port/i)
  } finally {
    squatter.close()
    rmSync(dir, { recursive: true, force: true })
  }
}, 120_000)
