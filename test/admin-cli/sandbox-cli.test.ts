import { afterAll, beforeAll, expect, it } from 'vitest'
import { findSandboxOf } from '../../src/sandboxes/sandboxes-service.ts'
import { createTestApp, form, withKey } from '../helpers/app.ts'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

/** Each test runs several CLI processes, each a few seconds on a loaded machine. */
const CLI_TESTS = { timeout: 120_000 }

describeDb(
  'admin CLI: sandboxes',
  () => {
    let database: TestDatabase
    let env: Record<string, string>
    const apiKeys = { live: '', sandbox: '' }
    beforeAll(async () => {
      database = await createTestDatabase()
      env = { DATABASE_URL: database.url }
    })
    afterAll(() => database.destroy())

    it('makes sandbox keys with keys create --sandbox, and names the sandbox with accounts sandbox', async () => {
      const live = await runPetService(['keys', 'create', '--account', 'cli@example.com', '--json'], env)
      expect(live.code, live.stderr).toBe(0)
      expect(JSON.parse(live.stdout)).toMatchObject({
        mode: 'live',
        api_key: expect.stringMatching(/^pet_sk_[0-9A-Za-z]{36}$/),
      })
      const test = await runPetService(
        ['keys', 'create', '--account', 'cli@example.com', '--sandbox', '--json'],
        env,
      )
      expect(test.code, test.stderr).toBe(0)
      const made = JSON.parse(test.stdout)
      expect(made).toMatchObject({
        mode: 'sandbox',
        api_key: expect.stringMatching(/^pet_sk_test_[0-9A-Za-z]{36}$/),
      })
      expect(made.account_id).not.toBe(JSON.parse(live.stdout).account_id)
      apiKeys.live = JSON.parse(live.stdout).api_key
      apiKeys.sandbox = made.api_key

      const sandbox = await runPetService(
        ['accounts', 'sandbox', '--email', 'cli@example.com', '--json'],
        env,
      )
      expect(JSON.parse(sandbox.stdout)).toMatchObject({
        account_id: made.account_id,
        created: false,
        mode: 'sandbox',
      })
      const listed = await runPetService(
        ['keys', 'list', '--account', 'cli@example.com', '--sandbox', '--json'],
        env,
      )
      expect(JSON.parse(listed.stdout).map((k: { id: string }) => k.id)).toEqual([made.key_id])
    })

    it('resets the sandbox only with --yes, keeping its keys', async () => {
      const live = await database.db
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', 'cli@example.com')
        .executeTakeFirstOrThrow()
      const sandbox = (await findSandboxOf(database.db, live.id))!
      const t = await createTestApp({}, { database })
      try {
        for (const [key, name] of [
          [apiKeys.sandbox, 'Sandy'],
          [apiKeys.live, 'Livia'],
        ] as const) {
          const res = await withKey(t.app, key)({ method: 'POST', url: '/v1/pet', ...form({ name }) })
          expect(res.statusCode).toBe(201)
        }
      } finally {
        await t.close()
      }
      const unconfirmed = await runPetService(
        ['accounts', 'reset-sandbox', '--email', 'cli@example.com'],
        env,
      )
      expect(unconfirmed.code).toBe(2)
      expect(unconfirmed.stderr).toContain('add --yes')
      const reset = await runPetService(
        ['accounts', 'reset-sandbox', '--email', 'cli@example.com', '--yes'],
        env,
      )
      expect(reset.code, reset.stderr).toBe(0)
      const pets = await database.db.selectFrom('pets').select(['account_id', 'name']).execute()
      expect(pets).toEqual([{ account_id: live.id, name: 'Livia' }])
      const keys = await database.db
        .selectFrom('api_keys')
        .select('id')
        .where('account_id', '=', sandbox.id)
        .execute()
      expect(keys).toHaveLength(1)
    })
  },
  CLI_TESTS,
)
