import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { oauthClientEnv } from '../helpers/oauth.ts'

const PYTHON_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url))

/** The oldest Python the library supports: pyproject.toml's requires-python. */
const OLDEST = /^requires-python = ">=(\d+\.\d+)"$/m.exec(
  readFileSync(join(PYTHON_DIR, 'pyproject.toml'), 'utf8'),
)![1]!

/** An interpreter of that version, if this machine has one: on PATH, or installed by pyenv. */
function findOldestPython(): string | undefined {
  const pyenv = join(homedir(), '.pyenv', 'versions')
  const candidates = [
    `python${OLDEST}`,
    ...(existsSync(pyenv) ? readdirSync(pyenv).filter((v) => v.startsWith(`${OLDEST}.`)) : []).map((v) =>
      join(pyenv, v, 'bin', 'python3'),
    ),
  ]
  const [major, minor] = OLDEST.split('.')
  for (const candidate of candidates) {
    try {
      execFileSync(candidate, ['-c', `import sys; assert sys.version_info[:2] == (${major}, ${minor})`], {
        stdio: 'ignore',
      })
      return candidate
    } catch {
      // not this one
    }
  }
  return undefined
}

const OLDEST_PYTHON = findOldestPython()

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env } })
    let output = ''
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

// The Python client (standard library only) is tested by its own unittest suite, run here with
// the machine's python3 against a live service, so `npm test` (and CI) covers it.
describeDb('Python client', () => {
  let live: LiveServer
  let env: Record<string, string>
  const temp = mkdtempSync(join(tmpdir(), 'pet-service-python-'))

  beforeAll(async () => {
    live = await startLiveServer()
    const { apiKey, accountId } = await live.newAccount()
    const { apiKey: readOnly } = await live.newAccount({ scopes: ['read:pets'] })
    env = {
      PET_SERVICE_URL: live.url,
      PET_SERVICE_API_KEY: apiKey,
      PET_SERVICE_READONLY_API_KEY: readOnly,
      ...(await oauthClientEnv(live, accountId)),
      PYTHONDONTWRITEBYTECODE: '1',
    }
  })
  afterAll(async () => {
    await live.close()
    rmSync(temp, { recursive: true, force: true })
  })

  it('has one module per resource, named as the TypeScript client names its files', () => {
    const modules = (dir: string, extension: string) =>
      readdirSync(fileURLToPath(new URL(`../../clients/${dir}`, import.meta.url)))
        .filter((file) => file.endsWith(extension) && !file.startsWith('_') && file !== 'resource.ts')
        .map((file) => file.slice(0, -extension.length).replaceAll('-', '_'))
        .sort()
    expect(modules('python/pet_service/resources', '.py')).toEqual(modules('typescript/src/resources', '.ts'))
  })

  it('passes its unittest suite against the live service (python3 -m unittest)', async () => {
    const { code, output } = await run('python3', ['-m', 'unittest', '-v'], { cwd: PYTHON_DIR, env })
    expect(code, output).toBe(0)
    expect(output).toMatch(/\nOK/)
    expect(output).toMatch(/Ran (\d{2,}) tests/)
    // Every test ran, the OAuth ones included.
    expect(output).not.toMatch(/skipped/)
  })

  // Run the suite on the oldest Python the library supports too, when this machine has one
  // (pyenv here). Skipped, with this reason, where none is installed.
  it.skipIf(OLDEST_PYTHON === undefined)(
    `passes the same suite on Python ${OLDEST}, the oldest supported`,
    async () => {
      const { code, output } = await run(OLDEST_PYTHON!, ['-m', 'unittest'], { cwd: PYTHON_DIR, env })
      expect(code, output).toBe(0)
      expect(output).not.toMatch(/skipped/)
    },
  )

  it('installs offline with pip --no-build-isolation and works from the installed copy', async () => {
    // A copy, so the build's egg-info and build/ never land in the working tree.
    const source = join(temp, 'src')
    cpSync(PYTHON_DIR, source, { recursive: true, filter: (p) => !p.includes('__pycache__') })
    const site = join(temp, 'site')
    const install = await run(
      'python3',
      [
        '-m',
        'pip',
        'install',
        '--no-build-isolation',
        '--no-index',
        '--no-deps',
        '--quiet',
        '--target',
        site,
        source,
      ],
      { cwd: temp, env: { PIP_DISABLE_PIP_VERSION_CHECK: '1' } },
    )
    expect(install.code, install.output).toBe(0)
    const [distInfo] = readdirSync(site).filter((name) => name.endsWith('.dist-info'))
    expect(readFileSync(join(site, distInfo!, 'METADATA'), 'utf8')).toContain('Requires-Python: >=3.10\n')
    const script = [
      'import os, pet_service',
      'from pet_service import PetService',
      'assert pet_service.__file__.startswith(os.environ["SITE"]), pet_service.__file__',
      'client = PetService(api_key=os.environ["PET_SERVICE_API_KEY"], base_url=os.environ["PET_SERVICE_URL"])',
      'pet = client.pets.create(name="Installed", owner_id=None, species="dog", breed=None)',
      'print(pet["id"], pet["name"], pet.request_id)',
    ].join('\n')
    const used = await run('python3', ['-c', script], {
      cwd: temp,
      env: { ...env, PYTHONPATH: site, SITE: site },
    })
    expect(used.code, used.output).toBe(0)
    expect(used.output).toMatch(/^\d+ Installed req_/)
  })
})
