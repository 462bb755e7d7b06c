import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { REPO_ROOT } from '../helpers/cli.ts'
import { describeDb } from '../helpers/database.ts'

/** The README's Quick start: its shell blocks, in order. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const body = section.slice(0, section.indexOf('\n## ', 1))
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, code]) => code!)
}

function bash(script: string, env: Record<string, string>, input: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPO_ROOT, env })
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
    child.stdin.end(input)
  })
}

/**
 * Walks the README's Quick start as a new user does, in the repository's folder, against a
 * live server on a fresh database: a key, a pet (curl and petctl), a dashboard password, an
 * OAuth client and a token used on v2. Only what a person would do by hand is scripted: the
 * service runs here instead of `npm start` on port 8080, the password comes on standard input,
 * and the client's `export` line is pasted from what `clients create` printed.
 */
describeDb('README Quick start', () => {
  let live: LiveServer
  let dir: string

  beforeAll(async () => {
    live = await startLiveServer()
    dir = mkdtempSync(join(tmpdir(), 'quick-start-'))
  })
  afterAll(async () => {
    await live.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('runs as written, start to finish', async () => {
    const blocks = quickStartBlocks()
    expect(blocks[0]).toContain('PORT=8080 npm start')
    const steps = blocks
      .slice(1)
      .join('\n')
      .replaceAll('http://localhost:8080', live.url)
      .replace(/^(npx pet-service clients create .*)$/m, 'CREATED=$($1)\necho "$CREATED"')
      .replace(
        /^export PET_SERVICE_CLIENT_ID=pet_ci_\.\.\. .*$/m,
        `eval "$(echo "$CREATED" | grep 'export PET_SERVICE_CLIENT_ID')"`,
      )
    const run = await bash(
      steps,
      {
        PATH: process.env.PATH!,
        HOME: dir,
        // The admin CLI writes where the live server reads (the README's default is ./data/).
        DATABASE_URL: live.database.url,
        LOG_LEVEL: 'warn',
      },
      'lighthouse-harbour-37\n',
    )
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toMatch(/"object":"pet","name":"Rex"/) // curl
    expect(run.stdout).toMatch(/^1\s+Rex\s+dog/m) // petctl pets list
    expect(run.stdout).toContain('Set the dashboard password of me@example.com')
    expect(run.stdout).toMatch(/\[\{"id":1,"name":"Rex",.*"status":"available"/) // v2 with the token
    expect(run.stderr).toContain(`database: ${live.database.url}\n`)
    const account = await live.database.db
      .selectFrom('accounts')
      .where('email', '=', 'me@example.com')
      .select('password_hash')
      .executeTakeFirstOrThrow()
    expect(account.password_hash).toMatch(/^scrypt\$/)
  }, 120_000)
})
