import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { runNodeScript } from '../helpers/cli.ts'
import { describeDb } from '../helpers/database.ts'
import { codeBlocks, readDocument, USER_DOCUMENTS } from '../helpers/markdown.ts'
import { serverError, startProxy } from '../helpers/misbehaving-proxy.ts'
import { petctl } from '../helpers/petctl.ts'

const PETCTL = fileURLToPath(new URL('../../bin/petctl.js', import.meta.url))

/** Runs bin/petctl.js as a child process, the way a user would. */
const spawnPetctl = (argv: string[], env: Record<string, string>) => runNodeScript(PETCTL, argv, env)

/** Every command and its help, found as a person finds them: in the "Commands:" of each help. */
async function everyCommandHelp(): Promise<[string[], string][]> {
  const subcommands = (help: string) =>
    [...(help.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '').matchAll(/^ {2}([a-z-]+)/gm)]
      .map(([, name]) => name!)
      .filter((name) => name !== 'help')
  const commands: [string[], string][] = []
  const pending: string[][] = [[]]
  for (let command = pending.pop(); command !== undefined; command = pending.pop()) {
    const help = await petctl([...command, '--help'], {})
    expect(help.code, command.join(' ')).toBe(0)
    commands.push([command, help.stdout])
    for (const name of subcommands(help.stdout)) pending.push([...command, name])
  }
  return commands
}

describeDb('petctl', () => {
  let live: LiveServer
  let env: Record<string, string>

  beforeAll(async () => {
    live = await startLiveServer()
    env = { PET_SERVICE_URL: live.url, PET_SERVICE_API_KEY: (await live.newAccount()).apiKey }
  })
  afterAll(() => live.close())

  it('creates, gets, updates, lists and deletes a pet, as a table or as the API JSON', async () => {
    const created = await petctl(
      ['pets', 'create', '--name', 'Rex', '--species', 'dog', '--breed', 'collie', '--json'],
      env,
    )
    expect(created.code, created.stderr).toBe(0)
    const pet = JSON.parse(created.stdout)
    expect(pet).toMatchObject({ object: 'pet', name: 'Rex', species: 'dog', breed: 'collie' })

    const shown = await petctl(['pets', 'get', String(pet.id)], env)
    expect(shown.stdout).toMatch(/^id\s+\d+$/m)
    expect(shown.stdout).toMatch(/^name\s+Rex$/m)
    expect(shown.stdout).toMatch(/^owner_id\s+-$/m)

    const updated = await petctl(
      ['pets', 'update', String(pet.id), '--name', 'Max', '--breed', '', '--json'],
      env,
    )
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'Max', breed: null, version: 2 })

    const listed = await petctl(['pets', 'list'], env)
    expect(listed.stdout.split('\n')[0]).toMatch(
      /^ID\s+NAME\s+SPECIES\s+BREED\s+OWNER_ID\s+STATUS\s+CREATED_AT$/,
    )
    expect(listed.stdout).toMatch(new RegExp(`^${pet.id}\\s+Max\\s+dog\\s+-\\s+-\\s+available`, 'm'))

    const deleted = await petctl(['pets', 'delete', String(pet.id)], env)
    expect(deleted.stdout).toBe(`Deleted pet ${pet.id}.\n`)
  })

  it('lists one page with a hint, or every page with --all and a progress count on a terminal', async () => {
    const own = { ...env, PET_SERVICE_API_KEY: (await live.newAccount()).apiKey }
    for (let i = 0; i < 12; i++) await petctl(['pets', 'create', '--name', `Pet ${i}`], own)
    const page = await petctl(['pets', 'list', '--limit', '5'], own)
    expect(page.stdout.trim().split('\n')).toHaveLength(7) // header, 5 rows, the hint
    expect(page.stdout).toContain('--starting-after')
    const all = await petctl(['pets', 'list', '--all', '--limit', '5', '--json'], own, true)
    expect(JSON.parse(all.stdout)).toHaveLength(12)
    expect(all.stderr).toContain('Fetched 12 pets.')
    const quiet = await petctl(['pets', 'list', '--all', '--limit', '5'], own, false)
    expect(quiet.stderr).toBe('')
    expect(quiet.stdout.trim().split('\n')).toHaveLength(13)
  })

  it('manages users', async () => {
    const created = await petctl(
      ['users', 'create', '--name', 'Ann', '--email', 'ann@example.com', '--json'],
      env,
    )
    const user = JSON.parse(created.stdout)
    expect(user).toMatchObject({ object: 'user', name: 'Ann', email: 'ann@example.com' })
    const updated = await petctl(['users', 'update', user.id, '--phone', '+1 555 0100', '--json'], env)
    expect(JSON.parse(updated.stdout).phone).toBe('+1 555 0100')
    expect((await petctl(['users', 'get', user.id], env)).stdout).toMatch(/^email\s+ann@example\.com$/m)
    expect((await petctl(['users', 'list', '--email', 'ann@example.com'], env)).stdout).toContain(user.id)
    const pet = JSON.parse(
      (await petctl(['pets', 'create', '--name', 'Rex', '--owner-id', user.id, '--json'], env)).stdout,
    )
    const refused = await petctl(['users', 'delete', user.id], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('code user_has_pets')
    await petctl(['pets', 'delete', String(pet.id)], env)
    expect((await petctl(['users', 'delete', user.id], env)).stdout).toBe(`Deleted user ${user.id}.\n`)
  })

  it('manages orders', async () => {
    const pet = JSON.parse((await petctl(['pets', 'create', '--name', 'Rex', '--json'], env)).stdout)
    const created = await petctl(
      ['orders', 'create', '--pet-id', String(pet.id), '--quantity', '2', '--complete', 'true', '--json'],
      env,
    )
    expect(created.code, created.stderr).toBe(0)
    const order = JSON.parse(created.stdout)
    expect(order).toMatchObject({
      object: 'order',
      pet_id: pet.id,
      quantity: 2,
      complete: true,
      status: 'placed',
    })
    const updated = await petctl(
      [
        'orders',
        'update',
        String(order.id),
        '--status',
        'delivered',
        '--ship-date',
        '2026-12-24T18:00:00Z',
        '--json',
      ],
      env,
    )
    expect(JSON.parse(updated.stdout)).toMatchObject({
      status: 'delivered',
      ship_date: '2026-12-24T18:00:00Z',
    })
    expect((await petctl(['orders', 'get', String(order.id)], env)).stdout).toMatch(/^status\s+delivered$/m)
    expect((await petctl(['orders', 'list', '--pet-id', String(pet.id)], env)).stdout).toMatch(
      new RegExp(`^${order.id}\\s+${pet.id}\\s+2\\s+delivered`, 'm'),
    )
    const usage = await petctl(['orders', 'create', '--pet-id', String(pet.id), '--complete', 'yes'], env)
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--complete must be true or false')
    const refused = await petctl(['orders', 'create', '--pet-id', String(pet.id + 1_000_000)], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('code order_pet_not_found')
    expect((await petctl(['orders', 'delete', String(order.id)], env)).stdout).toBe(
      `Deleted order ${order.id}.\n`,
    )
  })

  it('prints the problem detail and exits 1 when the API refuses', async () => {
    const missing = await petctl(['pets', 'get', '999999'], env)
    expect(missing.code).toBe(1)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toMatch(/^Error: No pet with id 999999/m)
    expect(missing.stderr).toMatch(/code pet_not_found, param id, status 404, request req_\w+/)
    const revoked = await petctl(['pets', 'list'], {
      PET_SERVICE_URL: live.url,
      PET_SERVICE_API_KEY: 'pet_sk_wrong',
    })
    expect(revoked.code).toBe(1)
    expect(revoked.stderr).toContain('code api_key_')
    const invalid = await petctl(['pets', 'create', '--name', ' '], env)
    expect(invalid.stderr).toContain('param name')
  })

  it('retries a create that fails twice (one pet) and honours --timeout and --max-retries', async () => {
    const own = { ...env, PET_SERVICE_API_KEY: (await live.newAccount()).apiKey }
    let calls = 0
    const proxy = await startProxy(live.url, () => {
      calls++
      if (calls <= 2) return serverError(503)
      if (calls === 4) return { kind: 'forward', delayMs: 800 }
      return { kind: 'forward' }
    })
    try {
      const created = await petctl(['pets', 'create', '--name', 'Rex', '--url', proxy.url, '--json'], own)
      expect(created.code, created.stderr).toBe(0)
      expect(proxy.seen).toHaveLength(3)
      expect((await petctl(['pets', 'list', '--json'], own)).stdout).toContain('"name": "Rex"')
      expect(JSON.parse((await petctl(['pets', 'list', '--json'], own)).stdout).data).toHaveLength(1)
      const slow = await petctl(
        ['pets', 'list', '--url', proxy.url, '--timeout', '200', '--max-retries', '0'],
        own,
      )
      expect(slow.code).toBe(1)
      expect(slow.stderr).toContain('No response within 200 ms')
    } finally {
      await proxy.close()
    }
  })

  it('exits 2 with a usage message for a bad command line', async () => {
    for (const argv of [
      ['pets', 'fly'],
      ['pets', 'get'],
      ['pets', 'get', 'abc'],
      ['pets', 'create'],
      ['--bogus'],
    ]) {
      const result = await petctl(argv, env)
      expect(result.code, argv.join(' ')).toBe(2)
      expect(result.stderr).toContain('petctl --help')
    }
  })

  it('checks locally, before any request, that the credential the command needs is there', async () => {
    const proxy = await startProxy(live.url, () => ({ kind: 'forward' }))
    try {
      const noKey = await petctl(['pets', 'list'], { PET_SERVICE_URL: proxy.url })
      expect(noKey.code).toBe(2)
      expect(noKey.stderr).toContain(
        'petctl pets list needs an API key: set PET_SERVICE_API_KEY or pass --api-key',
      )
      const token = await petctl(['pets', 'get', '1'], {
        PET_SERVICE_URL: proxy.url,
        PET_SERVICE_API_KEY: 'eyJhbGciOiJFUzI1NiJ9.e30.x',
      })
      expect(token.code).toBe(2)
      expect(token.stderr).toContain('is an OAuth access token')
      const noOauth = await petctl(['token'], {
        PET_SERVICE_URL: proxy.url,
        PET_SERVICE_API_KEY: env.PET_SERVICE_API_KEY!,
      })
      expect(noOauth.code).toBe(2)
      expect(noOauth.stderr).toContain('PET_SERVICE_CLIENT_ID and PET_SERVICE_CLIENT_SECRET')
      const v2 = await petctl(['pets', 'update', '1', '--v2', '--name', 'Rex'], {
        ...env,
        PET_SERVICE_URL: proxy.url,
      })
      expect(v2.code).toBe(2)
      const badUrl = await petctl(['pets', 'list', '--url', 'localhost:8080'], env)
      expect(badUrl.code).toBe(2)
      expect(badUrl.stderr).toContain('must start with http:// or https://')
      expect(proxy.seen).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it('gives every command its own help, and exits 0', async () => {
    for (const command of [
      ['pets'],
      ['pets', 'create'],
      ['pets', 'get'],
      ['pets', 'update'],
      ['pets', 'delete'],
      ['pets', 'list'],
      ['users'],
      ['users', 'create'],
      ['users', 'get'],
      ['users', 'update'],
      ['users', 'delete'],
      ['users', 'list'],
      ['orders'],
      ['orders', 'create'],
      ['orders', 'get'],
      ['orders', 'update'],
      ['orders', 'delete'],
      ['orders', 'list'],
      ['token'],
    ]) {
      const help = await petctl([...command, '--help'], {})
      expect(help.code, command.join(' ')).toBe(0)
      expect(help.stdout, command.join(' ')).toContain(`Usage: petctl ${command.join(' ')}`)
      expect(help.stdout, command.join(' ')).toContain('--api-key') // the global options too
    }
    expect((await petctl(['pets', '--help'], {})).stdout).toMatch(
      /create[\s\S]*get[\s\S]*update[\s\S]*delete[\s\S]*list/,
    )
    expect((await petctl(['pets', 'list', '--help'], {})).stdout).toContain('--starting-after <id>')
  })

  it('shows, in the help of petctl and of every command, an example of that command', async () => {
    const commands = await everyCommandHelp()
    for (const [command, help] of commands) {
      const name = `petctl ${command.join(' ')}`
      expect(help, name).toMatch(/\nExamples?:\n/)
      expect(help.split(/\nExamples?:\n/)[1], name).toContain(name)
    }
    expect(commands.length).toBeGreaterThanOrEqual(21) // petctl, 3 groups of 5, listen, token
  })

  it('gives no command an option named as a global one (whose value it would take)', async () => {
    const flags = (help: string, section: string) =>
      [...(help.split(`\n${section}:\n`)[1]?.split('\n\n')[0] ?? '').matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)]
        .map(([, flag]) => flag!)
        .filter((flag) => flag !== '--help')
    const commands = await everyCommandHelp()
    const global = flags(commands.find(([command]) => command.length === 1)![1], 'Global Options')
    expect(global).toContain('--url')
    // petctl's own Options are the global ones; each command's are its own.
    for (const [command, help] of commands.filter(([command]) => command.length > 0))
      expect(
        flags(help, 'Options').filter((flag) => global.includes(flag)),
        command.join(' '),
      ).toEqual([])
  })

  it('documents every command with an example that runs: a shell example of README.md or docs/', async () => {
    const examples = USER_DOCUMENTS.flatMap((path) =>
      codeBlocks(readDocument(path))
        .filter((block) => block.lang === 'sh' && !block.marks.has('no-run'))
        .flatMap((block) => block.code.split('\n')),
    )
    for (const [command] of (await everyCommandHelp()).filter(([command]) => command.length > 0)) {
      const name = `petctl ${command.join(' ')}`
      const invoked = new RegExp(`(^|[\\s($])${name.replaceAll(' ', '\\s+')}(\\s|$)`)
      expect(
        examples.some((line) => invoked.test(line)),
        name,
      ).toBe(true)
    }
  })

  it('suggests the command or flag meant by a typo, and exits 2', async () => {
    const command = await petctl(['pets', 'lst'], env)
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('(Did you mean list?)')
    const flag = await petctl(['pets', 'list', '--lmit', '3'], env)
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('(Did you mean --limit?)')
    const unknown = await petctl(['pets', 'list', '--bogus'], env)
    expect(unknown.stderr).toContain("error: unknown option '--bogus'")
    expect(unknown.stderr).not.toContain('ERR_PARSE_ARGS')
  })

  it('takes the key and URL from flags over the environment', async () => {
    const result = await petctl(
      ['pets', 'list', '--url', live.url, '--api-key', env.PET_SERVICE_API_KEY!, '--json'],
      {
        PET_SERVICE_URL: 'http://127.0.0.1:9',
        PET_SERVICE_API_KEY: 'pet_sk_wrong',
      },
    )
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).object).toBe('list')
  })

  it('reads the key and URL from a config file when neither flag nor environment sets them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petctl-config-'))
    try {
      const path = join(dir, 'config.json')
      writeFileSync(
        path,
        JSON.stringify({ PET_SERVICE_URL: live.url, PET_SERVICE_API_KEY: env.PET_SERVICE_API_KEY }),
      )
      const viaEnv = await petctl(['pets', 'list', '--json'], { PET_SERVICE_CONFIG: path })
      expect(viaEnv.code, viaEnv.stderr).toBe(0)
      const viaDefault = await petctl(['pets', 'list', '--json'], {
        XDG_CONFIG_HOME: dir,
        PET_SERVICE_URL: live.url,
      })
      expect(viaDefault.code).toBe(2) // no ~/.config/petctl/config.json there: no key, refused before a request
      expect(viaDefault.stderr).toContain('needs an API key')
      mkdirSync(join(dir, 'petctl'))
      writeFileSync(join(dir, 'petctl', 'config.json'), readFileSync(path))
      expect((await petctl(['pets', 'list'], { XDG_CONFIG_HOME: dir })).code).toBe(0)
      const broken = await petctl(['pets', 'list', '--config', join(dir, 'missing.json')], {})
      expect(broken.code).toBe(2)
      expect(broken.stderr).toContain('Cannot read the config file')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('runs as bin/petctl.js: help, a real call, and a non-zero exit on an API error', async () => {
    const help = await spawnPetctl(['--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('petctl pets create --name NAME')
    const created = await spawnPetctl(['pets', 'create', '--name', 'Rex', '--species', 'dog'], env)
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toMatch(/^name\s+Rex$/m)
    const missing = await spawnPetctl(['pets', 'delete', '999999'], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('pet_not_found')
  })
})
