import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  REPO_ROOT,
  runNodeScript,
  runPetService,
  type ServerProcess,
  startServerProcess,
} from '../helpers/cli.ts'
import { pollUntil } from '../helpers/poll.ts'

// `npm start` runs the bundle that scripts/build.ts writes, not the sources: it must find its
// assets and answer like the sources do. SQLite only: the bundle, not the database, is under test.
describe('the production bundle (npm start)', () => {
  let dir: string
  let server: ServerProcess
  let base: string
  let apiKey: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pet-service-bundle-'))
    const built = await runNodeScript(
      join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
      ['scripts/build.ts'],
      {},
    )
    expect(built.code, built.stderr).toBe(0)
    const env = { DATABASE_URL: `sqlite:${join(dir, 'bundle.db')}` }
    // Admin commands other than migrate and serve refuse a database that does not exist yet.
    expect((await runPetService(['migrate'], env)).code).toBe(0)
    const created = await runPetService(['keys', 'create', '--account', 'bundle@example.com', '--json'], env)
    apiKey = (JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { api_key: string }).api_key
    server = await startServerProcess(join(REPO_ROOT, 'dist/pet-service.js'), env)
    base = `http://127.0.0.1:${server.port}`
  }, 60_000)
  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves the API', async () => {
    const created = await fetch(`${base}/v1/pet`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'name=Bundled&species=dog',
    })
    expect(created.status).toBe(201)
    expect(await created.json()).toMatchObject({ name: 'Bundled', species: 'dog' })
  })

  it('serves the dashboard with its stylesheet and script', async () => {
    const page = await fetch(`${base}/dashboard/sign-in`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:href|src)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(assets.length).toBeGreaterThanOrEqual(2)
    for (const asset of assets) expect((await fetch(`${base}${asset}`)).status, asset).toBe(200)
  })

  it('stops cleanly on SIGTERM', async () => {
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  it('stops when the `npm start` process itself gets SIGTERM (a process manager stopping it)', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        SHUTDOWN_DRAIN_SECONDS: '0',
        DATABASE_URL: `sqlite:${join(dir, 'npm-start.db')}`,
      },
    })
    let out = ''
    npm.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    // The service's own pid, from its "ready" log line: npm and a shell may stand between.
    const pid = await new Promise<number>((resolve, reject) => {
      const timer = setInterval(() => {
        const ready = out.split('\n').find((line) => line.includes('pet-service ready'))
        if (ready !== undefined) {
          clearInterval(timer)
          resolve((JSON.parse(ready) as { pid: number }).pid)
        }
      }, 50)
      npm.on('exit', (code) => reject(new Error(`npm start exited early (${code}): ${out}`)))
    })
    expect(pid).not.toBe(npm.pid)
    npm.kill('SIGTERM')
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    await pollUntil(() => !alive(), 15_000)
    const survived = alive()
    if (survived) process.kill(pid, 'SIGKILL')
    expect(survived, 'the service outlived the npm process that started it').toBe(false)
  }, 40_000)
})
