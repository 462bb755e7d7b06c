import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.ts'
import { basic, createTestApp } from '../helpers/app.ts'
import { PET_SERVICE_BIN, runPetService } from '../helpers/cli.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'
import { POSTGRES_URL } from '../helpers/postgres.ts'

const hasTmux = spawnSync('tmux', ['-V']).status === 0

/**
 * Runs `command` in a terminal of a private tmux server, answering each prompt once it shows;
 * answers what the screen shows at the end.
 */
async function inTerminal(command: string, answers: [prompt: string, line: string][]): Promise<string> {
  const socket = `pet-service-test-${process.pid}-${Date.now()}`
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })
  const screen = () => tmux('capture-pane', '-p', '-t', 'cli').stdout
  const waitFor = async (text: string) => {
    await expect.poll(screen, { timeout: 20_000, interval: 100 }).toContain(text)
  }
  tmux('new-session', '-d', '-s', 'cli', '-x', '200', '-y', '40', `${command}; echo EXIT=$?; sleep 60`)
  try {
    for (const [prompt, line] of answers) {
      await waitFor(prompt)
      tmux('send-keys', '-t', 'cli', line, 'Enter')
    }
    await waitFor('EXIT=')
    return screen()
  } finally {
    tmux('kill-server')
  }
}

/** Each test runs several CLI processes, each a few seconds on a loaded machine. */
const CLI_TESTS = { timeout: 90_000 }

describeDb(
  'admin CLI pet-service',
  () => {
    let database: TestDatabase
    let env: Record<string, string>
    beforeAll(async () => {
      database = await createTestDatabase()
      env = { DATABASE_URL: database.url }
    })
    afterAll(() => database.destroy())

    it('creates a key (and its account) with --json, and the key works against the API', async () => {
      const res = await runPetService(
        ['keys', 'create', '--account', 'Me@Example.com', '--name', 'ci', '--json'],
        env,
      )
      expect(res.code, res.stderr).toBe(0)
      const out = JSON.parse(res.stdout)
      expect(out.api_key).toMatch(/^pet_sk_/)
      expect(out.account_id).toMatch(/^acct_/)
      expect(out).toMatchObject({ email: 'me@example.com', name: 'ci' })

      const app = (await createTestApp({}, { database })).app
      try {
        const created = await app.inject({
          method: 'POST',
          url: '/v1/pet',
          payload: 'name=Rex&species=dog',
          headers: { authorization: basic(out.api_key), 'content-type': 'application/x-www-form-urlencoded' },
        })
        expect(created.statusCode).toBe(201)
      } finally {
        await app.close()
      }

      const again = JSON.parse(
        (await runPetService(['keys', 'create', '--account', 'me@example.com', '--json'], env)).stdout,
      )
      expect(again.account_id).toBe(out.account_id)
      expect(again.api_key).not.toBe(out.api_key)
    })

    it('lists keys redacted and revokes one by id', async () => {
      const created = JSON.parse(
        (
          await runPetService(
            ['keys', 'create', '--account', 'list@example.com', '--scope', 'read:pets', '--json'],
            env,
          )
        ).stdout,
      )
      const listed = await runPetService(['keys', 'list', '--account', 'list@example.com', '--json'], env)
      expect(listed.code).toBe(0)
      expect(listed.stdout).not.toContain(created.api_key)
      const keys = JSON.parse(listed.stdout)
      expect(keys).toHaveLength(1)
      expect(keys[0]).toMatchObject({ id: created.key_id, scopes: ['read:pets'], revoked_at: null })
      expect(keys[0].redacted.endsWith(created.api_key.slice(-4))).toBe(true)

      const revoked = await runPetService(['keys', 'revoke', created.key_id], env)
      expect(revoked.code).toBe(0)
      const after = JSON.parse(
        (await runPetService(['keys', 'list', '--account', 'list@example.com', '--json'], env)).stdout,
      )
      expect(after[0].revoked_at).not.toBeNull()
    })

    it('creates accounts and refuses a duplicate', async () => {
      expect((await runPetService(['accounts', 'create', '--email', 'new@example.com'], env)).code).toBe(0)
      const dup = await runPetService(['accounts', 'create', '--email', 'new@example.com'], env)
      expect(dup.code).toBe(2)
      expect(dup.stderr).toContain('already exists')
    })

    it('explains bad usage and exits 2', async () => {
      for (const args of [
        ['keys', 'create'],
        ['keys', 'create', '--account', 'not-an-email'],
        ['frobnicate'],
        ['keys', 'revoke'],
      ]) {
        const res = await runPetService(args, env)
        expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2)
        expect(res.stderr.length, args.join(' ')).toBeGreaterThan(10)
      }
      const scope = await runPetService(
        ['keys', 'create', '--account', 'a@example.com', '--scope', 'admin'],
        env,
      )
      expect(scope.stderr).toContain('admin')
    })

    it('backs up a SQLite database to a consistent copy (and points PostgreSQL users to pg_dump)', async () => {
      const target = join(mkdtempSync(join(tmpdir(), 'pet-backup-')), 'copy.db')
      const res = await runPetService(['backup', target], env)
      if (DIALECT === 'postgres') {
        expect(res.code).toBe(2)
        expect(res.stderr).toContain('pg_dump')
        return
      }
      expect(res.code, res.stderr).toBe(0)
      const copy = openDatabase(`sqlite:${target}`)
      try {
        const accounts = await copy.db.selectFrom('accounts').select('email').execute()
        expect(accounts.map((a) => a.email)).toContain('me@example.com')
      } finally {
        await copy.close()
      }
    })

    it('says on stderr which database every command used', async () => {
      const res = await runPetService(['clients', 'list'], env)
      expect(res.code, res.stderr).toBe(0)
      const location = new URL(database.url)
      location.username = ''
      location.password = ''
      expect(res.stderr).toContain(`database: ${location}\n`)
      expect(res.stderr).not.toContain('created now')
      expect(res.stdout).not.toContain('database:')
    })

    it('sets the password of an account made here (standard input), which then signs in to the dashboard', async () => {
      const email = 'quickstart@example.com'
      expect((await runPetService(['accounts', 'create', '--email', email], env)).code).toBe(0)
      const weak = await runPetService(['accounts', 'set-password', '--email', email], env, 'Password1!\n')
      expect(weak.code).toBe(2)
      expect(weak.stderr).toContain('Nothing changed')
      const unknown = await runPetService(
        ['accounts', 'set-password', '--email', 'nobody@example.com'],
        env,
        'lighthouse-harbour-37\n',
      )
      expect(unknown.code, unknown.stderr).toBe(2)
      expect(unknown.stderr).toContain('No account for nobody@example.com')
      const empty = await runPetService(['accounts', 'set-password', '--email', email], env, '')
      expect(empty.code).toBe(2)
      expect(empty.stderr).toContain('No password on standard input')

      const set = await runPetService(
        ['accounts', 'set-password', '--email', email],
        env,
        'lighthouse-harbour-37\nignored second line\n',
      )
      expect(set.code, set.stderr).toBe(0)
      expect(set.stdout).toContain(`Set the dashboard password of ${email}`)
      const app = (await createTestApp({}, { database })).app
      try {
        const browser = new SessionClient(app)
        const wrong = await browser.signIn(email, 'ignored second line')
        expect(wrong.statusCode).not.toBe(303)
        const signedIn = await browser.signIn(email, 'lighthouse-harbour-37')
        expect(signedIn.statusCode).toBe(303)
        expect(signedIn.headers.location).toBe('/dashboard')
      } finally {
        await app.close()
      }
    })

    // A terminal: tmux gives the command a real one, and types only once the prompt shows.
    // Skipped on a developer machine without tmux; CI (whose image has it) must run it.
    it.skipIf(!hasTmux && process.env.CI !== 'true')(
      'asks twice on a terminal, without echoing the password',
      async () => {
        const email = 'terminal@example.com'
        expect((await runPetService(['accounts', 'create', '--email', email], env)).code).toBe(0)
        const password = 'lantern-orchard-58'
        const screen = await inTerminal(
          `env DATABASE_URL='${database.url}' LOG_LEVEL=warn ${process.execPath} ${PET_SERVICE_BIN} accounts set-password --email ${email}`,
          [
            ['New dashboard password for terminal@example.com:', password],
            ['Repeat it:', password],
          ],
        )
        expect(screen, screen).toContain(`Set the dashboard password of ${email}`)
        expect(screen).toContain('EXIT=0')
        expect(screen).not.toContain(password)
      },
    )

    it('gives every command its own help, and exits 0', async () => {
      for (const command of [
        ['serve'],
        ['migrate'],
        ['accounts', 'create'],
        ['accounts', 'set-password'],
        ['keys', 'create'],
        ['keys', 'list'],
        ['keys', 'revoke'],
        ['clients', 'create'],
        ['clients', 'list'],
        ['clients', 'delete'],
        ['backup'],
      ]) {
        const res = await runPetService([...command, '--help'], env)
        expect(res.code, command.join(' ')).toBe(0)
        expect(res.stdout, command.join(' ')).toContain(`Usage: pet-service ${command.join(' ')}`)
      }
      const bare = await runPetService([], env)
      expect(bare.code).toBe(0)
      expect(bare.stdout).toContain('Usage: pet-service')
      expect(bare.stdout).toContain('Only serve and migrate')
      const keys = await runPetService(['keys', 'create', '--help'], env)
      for (const flag of ['--account', '--name', '--scope', '--expires-in-days', '--json'])
        expect(keys.stdout).toContain(flag)
      // Thirteen processes in a row: about 10 s on a quiet machine, over 30 s when CI runs test
      // files side by side on two cores.
    }, 120_000)

    it('suggests the command or option meant by a typo, and exits 2', async () => {
      const command = await runPetService(['keys', 'lst'], env)
      expect(command.code).toBe(2)
      expect(command.stderr).toContain('(Did you mean list?)')
      const option = await runPetService(['keys', 'create', '--acount', 'me@example.com'], env)
      expect(option.code).toBe(2)
      expect(option.stderr).toContain('(Did you mean --account?)')
      const missing = await runPetService(['keys', 'create'], env)
      expect(missing.stderr).toContain('--account EMAIL is required')
    })

    it('migrates on demand', async () => {
      const res = await runPetService(['migrate'], env)
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toContain('up to date')
    })
  },
  CLI_TESTS,
)

it('refuses to start with a bad configuration, naming every bad value', async () => {
  const res = await runPetService(['migrate'], {
    PORT: 'eighty',
    DATABASE_URL: 'mysql://x',
    LOG_LEVEL: 'loud',
  })
  expect(res.code).toBe(2)
  for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL']) expect(res.stderr).toContain(name)
})

describeDb(
  'admin CLI on a database that does not exist yet',
  () => {
    let database: TestDatabase
    beforeAll(async () => {
      database = await createTestDatabase({ migrate: false })
    })
    afterAll(() => database.destroy())

    it('refuses to write a key there, then migrate creates it and says so', async () => {
      // SQLite: a file nobody made (another folder, a typo); PostgreSQL: a schema with no tables.
      const url =
        DIALECT === 'sqlite'
          ? `sqlite:${join(mkdtempSync(join(tmpdir(), 'pet-new-')), 'new.db')}`
          : database.url
      const refused = await runPetService(['keys', 'create', '--account', 'me@example.com'], {
        DATABASE_URL: url,
      })
      expect(refused.code).toBe(2)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toContain('pet-service migrate')
      if (DIALECT === 'sqlite') {
        expect(refused.stderr).toContain(`No database at ${url.slice('sqlite:'.length)}`)
        expect(existsSync(url.slice('sqlite:'.length))).toBe(false)
      } else expect(refused.stderr).toContain('has no tables')

      const created = await runPetService(['migrate'], { DATABASE_URL: url })
      expect(created.code, created.stderr).toBe(0)
      expect(created.stderr).toMatch(/database: .* \(created now\)/)
      const key = await runPetService(['keys', 'create', '--account', 'me@example.com', '--json'], {
        DATABASE_URL: url,
      })
      expect(key.code, key.stderr).toBe(0)
      expect(key.stderr).not.toContain('created now')
    })

    it.runIf(DIALECT === 'postgres')(
      'says how to create a PostgreSQL database that does not exist, for migrate and serve',
      async () => {
        const url = new URL(POSTGRES_URL)
        url.pathname = '/pet_service_missing'
        const env = {
          DATABASE_URL: url.toString(),
          PUBLIC_URL: 'http://127.0.0.1',
          PORT: '0',
          METRICS_PORT: '0',
        }
        const createdb = `createdb -h ${url.hostname} -p ${url.port || '5432'} -U ${url.username} pet_service_missing`
        for (const command of ['migrate', 'serve']) {
          const res = await runPetService([command], env)
          expect(res.code, command).toBe(1)
          expect(res.stderr, command).toContain(
            `database "pet_service_missing" does not exist: create it with \`${createdb}\``,
          )
        }
      },
    )
  },
  CLI_TESTS,
)
