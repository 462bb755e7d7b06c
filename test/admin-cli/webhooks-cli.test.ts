import { afterAll, beforeAll, expect, it } from 'vitest'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

/** Each test runs several CLI processes, each a few seconds on a loaded machine. */
const CLI_TESTS = { timeout: 90_000 }

describeDb(
  'admin CLI: pet-service webhooks',
  () => {
    let database: TestDatabase
    let env: Record<string, string>
    beforeAll(async () => {
      database = await createTestDatabase()
      env = { DATABASE_URL: database.url, WEBHOOKS_ALLOW_INSECURE: 'true' }
      for (const account of ['hooks@example.com', 'other@example.com']) {
        expect((await runPetService(['accounts', 'create', '--email', account], env)).code).toBe(0)
      }
    })
    afterAll(() => database.destroy())

    const run = (...args: string[]) => runPetService(['webhooks', ...args], env)

    it('creates an endpoint (the secret shown once), lists it, disables and enables it', async () => {
      const created = await run(
        'create',
        '--account',
        'hooks@example.com',
        '--url',
        'http://127.0.0.1:9/hooks',
        '--events',
        'pet.*, user.deleted',
        '--description',
        'local receiver',
        '--json',
      )
      expect(created.code, created.stderr).toBe(0)
      const endpoint = JSON.parse(created.stdout)
      expect(endpoint).toMatchObject({
        object: 'webhook_endpoint',
        url: 'http://127.0.0.1:9/hooks',
        enabled_events: ['pet.*', 'user.deleted'],
        description: 'local receiver',
        status: 'enabled',
      })
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)

      const listed = await run('list', '--account', 'hooks@example.com', '--json')
      expect(listed.code, listed.stderr).toBe(0)
      const [only] = JSON.parse(listed.stdout)
      expect(only).toEqual({ ...endpoint, secret: undefined, updated_at: only.updated_at })
      expect(listed.stdout).not.toContain('whsec_')

      const disabled = await run('disable', endpoint.id, '--account', 'hooks@example.com')
      expect(disabled.code, disabled.stderr).toBe(0)
      expect(disabled.stdout).toContain(`${endpoint.id} is disabled.`)
      expect((await run('list', '--account', 'hooks@example.com')).stdout).toContain(
        'disabled (Disabled by the account holder.)',
      )
      const enabled = await run('enable', endpoint.id, '--account', 'hooks@example.com')
      expect(enabled.stdout).toContain(`${endpoint.id} is enabled.`)

      // Another account neither sees nor changes it.
      expect((await run('list', '--account', 'other@example.com')).stdout).toContain('No webhook endpoints')
      const foreign = await run('disable', endpoint.id, '--account', 'other@example.com')
      expect(foreign.code).toBe(2)
      expect(foreign.stderr).toContain(`No webhook endpoint ${endpoint.id}`)
    })

    it('refuses, with the reason and exit status 2, a URL the policy refuses, unknown events and unknown accounts', async () => {
      const strict = await runPetService(
        ['webhooks', 'create', '--account', 'hooks@example.com', '--url', 'http://127.0.0.1:9/hooks'],
        { DATABASE_URL: database.url },
      )
      expect(strict.code).toBe(2)
      expect(strict.stderr).toMatch(/https/)
      const events = await run(
        'create',
        '--account',
        'hooks@example.com',
        '--url',
        'http://127.0.0.1:9/x',
        '--events',
        'pets.*',
      )
      expect(events.code).toBe(2)
      expect(events.stderr).toContain('pets.*')
      const nobody = await run('list', '--account', 'nobody@example.com')
      expect(nobody.code).toBe(2)
      expect(nobody.stderr).toContain('No account for nobody@example.com')
    })
  },
  CLI_TESTS,
)
