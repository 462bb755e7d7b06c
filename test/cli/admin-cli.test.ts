import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/config.ts'
import { openDatabase } from '../../src/db/database.ts'
import { basic } from '../helpers/app.ts'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, DIALECT, describeDb, type TestDatabase } from '../helpers/database.ts'

describeDb('admin CLI pet-service', () => {
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

    const app = await buildApp({
      config: loadConfig({ DATABASE_URL: database.url }),
      database,
      logger: false,
    })
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
      expect(res.code, args.join(' ')).toBe(2)
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

  it('migrates on demand', async () => {
    const res = await runPetService(['migrate'], env)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain('up to date')
  })
})

it('refuses to start with a bad configuration, naming every bad value', async () => {
  const res = await runPetService(['migrate'], {
    PORT: 'eighty',
    DATABASE_URL: 'mysql://x',
    LOG_LEVEL: 'loud',
  })
  expect(res.code).toBe(2)
  for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL']) expect(res.stderr).toContain(name)
})
