import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PACKAGE_DIR = join(ROOT, 'clients/typescript')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

// What users of the published library get: `npm pack` the package, install the tarball in an
// empty project (offline: it has no dependencies), and use it from plain JavaScript and from
// strict TypeScript.
describeDb('@pet-service/client as a package', () => {
  let live: LiveServer
  let apiKey: string
  const temp = mkdtempSync(join(tmpdir(), 'pet-service-pack-'))
  const project = join(temp, 'consumer')
  let files: string[]

  beforeAll(async () => {
    live = await startLiveServer()
    apiKey = (await live.newAccount()).apiKey
    const env = {
      ...process.env,
      npm_config_update_notifier: 'false',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    }
    const packed = await run('npm', ['pack', '--json', '--pack-destination', temp], { cwd: PACKAGE_DIR, env })
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string
      files: { path: string }[]
    }[]
    files = info!.files.map((f) => f.path)
    mkdirSync(project)
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    )
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(temp, info!.filename)], {
      cwd: project,
      env,
    })
  }, 120_000)
  afterAll(async () => {
    await live.close()
    rmSync(temp, { recursive: true, force: true })
  })

  it('ships only the built ESM, its type declarations and the README', () => {
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files).toContain('README.md')
    expect(files.filter((f) => !/^(dist\/|README\.md$|package\.json$)/.test(f))).toEqual([])
  })

  it('has no dependencies and nothing Node-only in its code, so browsers can load it', () => {
    const installed = join(project, 'node_modules/@pet-service/client')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    expect(manifest.dependencies ?? {}).toEqual({})
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(installed, file), 'utf8')
      expect(code, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/)
    }
  })

  it('declares Node 20 or later, the oldest Node line the repository is tested on', () => {
    const installed = join(project, 'node_modules/@pet-service/client')
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).engines).toEqual({
      node: '>=20',
    })
  })

  it('installs in an empty project and works from plain JavaScript', async () => {
    writeFileSync(
      join(project, 'main.js'),
      `import { PetService, NotFoundError } from '@pet-service/client'
const client = new PetService({ apiKey: process.env.KEY, baseUrl: process.env.URL })
const pet = await client.pets.create({ name: 'Packed', owner_id: null, species: 'dog', breed: 'collie' })
const missing = await client.pets.get(999999).catch((e) => e)
console.log(JSON.stringify({ name: pet.name, requestId: pet.lastResponse.requestId, notFound: missing instanceof NotFoundError }))
`,
    )
    const { stdout } = await run(process.execPath, ['main.js'], {
      cwd: project,
      env: { ...process.env, KEY: apiKey, URL: live.url },
    })
    expect(JSON.parse(stdout)).toMatchObject({
      name: 'Packed',
      requestId: expect.stringMatching(/^req_/),
      notFound: true,
    })
  })

  it('type-checks a strict TypeScript consumer against the shipped declarations', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          types: [],
          skipLibCheck: true,
        },
        files: ['check.ts'],
      }),
    )
    writeFileSync(
      join(project, 'check.ts'),
      `import { PetService, type Pet, type PetCreateParams, PetServiceError } from '@pet-service/client'
const client = new PetService({ apiKey: 'pet_sk_x' })
const params: PetCreateParams = { name: 'Rex', owner_id: 'usr_1', species: 'dog', breed: null }
export async function demo(): Promise<string> {
  const pet = await client.pets.create(params, { idempotencyKey: 'k', timeout: 1000, maxRetries: 1 })
  for await (const p of client.pets.list({ status: 'available', limit: 100 })) console.log(p.name)
  try { await client.pets.get(pet.id) } catch (e) { if (e instanceof PetServiceError) return e.code ?? '' }
  return pet.lastResponse.requestId ?? pet.name
}
// @ts-expect-error name is required
client.pets.create({ species: 'dog' })
`,
    )
    const result = await run(process.execPath, [TSC, '-p', project]).catch((e: { stdout: string }) => e)
    expect('stdout' in result ? result.stdout : '').toBe('')
  })
})
