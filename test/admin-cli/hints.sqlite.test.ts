import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPetService } from '../helpers/cli.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts'

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
}

/** Each case runs a CLI process, a few seconds on a loaded machine. */
const CLI_TESTS = { timeout: 90_000 }

// The hints a newcomer copies (a curl with the new key, a token request with the new client)
// must reach the service they configured, not a guess at localhost:8080.
describe('the admin CLI helps a newcomer', CLI_TESTS, () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.destroy())

  const tokenHint = async (env: Record<string, string>) => {
    const res = await runPetService(['clients', 'create', '--account', 'hints@example.com'], {
      DATABASE_URL: database.url,
      ...env,
    })
    expect(res.code, res.stderr).toBe(0)
    return /^Get a token: curl .* (\S+)$/m.exec(res.stdout)?.[1]
  }

  it('names PUBLIC_URL in the "Get a token" hint when it is set', async () => {
    expect(await tokenHint({ PUBLIC_URL: 'https://pets.example.com/', PORT: '9090' })).toBe(
      'https://pets.example.com/oauth/token',
    )
  })

  it('names the configured HOST and PORT otherwise, localhost for a wildcard HOST', async () => {
    expect(await tokenHint({ HOST: '127.0.0.2', PORT: '9090' })).toBe('http://127.0.0.2:9090/oauth/token')
    expect(await tokenHint({ HOST: '::1', PORT: '9090' })).toBe('http://[::1]:9090/oauth/token')
    expect(await tokenHint({ PORT: '9091' })).toBe('http://localhost:9091/oauth/token')
  })

  it('names the same address in the "Try it" hint of a new key', async () => {
    const res = await runPetService(['keys', 'create', '--account', 'hints@example.com'], {
      DATABASE_URL: database.url,
      PUBLIC_URL: 'https://pets.example.com',
    })
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toMatch(/^Try it: curl .* https:\/\/pets\.example\.com\/v1\/pet$/m)
  })

  it('prints its version with --version and exits 0', async () => {
    for (const flag of ['--version', '-V']) {
      const res = await runPetService([flag], {})
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout.trim()).toBe(version)
    }
  })
})
