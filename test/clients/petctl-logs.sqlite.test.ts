import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { petctl } from '../helpers/petctl.ts'
import { waitUntil } from '../helpers/poll.ts'

// `petctl logs tail` against the real service over HTTP: it prints the entries logged after it
// started, oldest first, with the filters given as flags, and leaves out its own polls.

describeDb('petctl logs tail', () => {
  let t: TestApp
  let env: Record<string, string>
  let accountId: string

  beforeAll(async () => {
    t = await createTestApp()
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const account = await t.newAccount()
    accountId = account.accountId
    env = { PET_SERVICE_URL: url, PET_SERVICE_API_KEY: account.apiKey }
  })
  afterAll(() => t?.close())

  /** Waits until the tail has read where it starts (its first poll is logged too). */
  const tailStarted = (polls: number) =>
    waitUntil('the tail has started', async () => {
      await t.app.deps.requestLogs.flush()
      const rows = await t.database.db
        .selectFrom('request_log')
        .select('path')
        .where('account_id', '=', accountId)
        .execute()
      return rows.filter((r) => r.path.startsWith('/v1/request_log')).length >= polls
    })

  it('prints the new entries that match its filters, oldest first, as JSON lines, and stops after --count', async () => {
    // Logged before the tail starts: never printed.
    expect((await petctl(['pets', 'create', '--name', ''], env)).code).toBe(1)
    const tail = petctl(
      ['logs', 'tail', '--status', '4xx', '--path', '/v1/pet', '--interval', '100', '--count', '2', '--json'],
      env,
    )
    await tailStarted(1)
    const first = await petctl(['pets', 'create', '--name', '', '--json'], env)
    expect((await petctl(['pets', 'create', '--name', 'Rex'], env)).code).toBe(0)
    const second = await petctl(['pets', 'get', '999999', '--json'], env)
    expect([first.code, second.code]).toEqual([1, 1])
    const result = await tail
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines.map((e) => [e.method, e.path, e.status])).toEqual([
      ['POST', '/v1/pet', 400],
      ['GET', '/v1/pet/999999', 404],
    ])
    expect(lines[0].error_code).toBe('parameter_invalid')
  })

  it('prints one line per entry for people, and refuses a status class it does not know', async () => {
    const polls = (
      await t.database.db
        .selectFrom('request_log')
        .select('path')
        .where('account_id', '=', accountId)
        .execute()
    ).filter((r) => r.path.startsWith('/v1/request_log')).length
    const tail = petctl(['logs', 'tail', '--method', 'delete', '--interval', '100', '--count', '1'], env)
    await tailStarted(polls + 1)
    await petctl(['pets', 'delete', '424242'], env)
    const result = await tail
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      /^\S+Z {2}404 {2}DELETE \/v1\/pet\/424242 {2}\d+ ms {2}req_\w+ {2}key_\w+ {2}pet_not_found\n$/,
    )
    expect(result.stderr).toContain('Ctrl-C')

    const wrong = await petctl(['logs', 'tail', '--status', '6xx'], env)
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--status must be one of 2xx, 3xx, 4xx, 5xx')
    const help = await petctl(['logs', 'tail', '--help'], env)
    expect(help.stdout).toContain('petctl logs tail --status 4xx --path /v1/pet')
  })
})
