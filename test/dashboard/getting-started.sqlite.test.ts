import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { beforeAll, expect, it } from 'vitest'
import { help } from '../../cli/petctl/main.ts'
import { basic, useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

/** The text of `<pre id="ID"><code>…</code></pre>` on a page, as a person copies it. */
function codeOf(page: string, id: string): string {
  const match = new RegExp(`<pre id="${id}"><code>([\\s\\S]*?)</code></pre>`).exec(page)
  if (match === null) throw new Error(`no code block #${id} on the page`)
  return match[1]!
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&')
}

/**
 * The dashboard's copy-paste examples, run the way a person runs them: pasted into a shell with
 * the key they were told to set. SQLite only: they run curl against a live server.
 */
describeDb('dashboard getting-started examples', () => {
  let base: string
  let session: SessionClient
  let apiKey: string

  const t = useTestApp()
  beforeAll(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    session = new SessionClient(t.app)
    session.host = new URL(base).host
    await session.signUp(`start-${Date.now()}@example.com`)
    apiKey = await session.createKey('Laptop')
  })

  // Asynchronous: the server answering curl runs in this process.
  const shell = async (script: string, env: Record<string, string> = {}) =>
    (
      await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
        env: { PATH: process.env.PATH!, ...env },
        encoding: 'utf8',
      })
    ).stdout

  it('names the same environment variables as petctl and the client libraries', async () => {
    const overview = (await session.get(`/dashboard`)).body
    const named = new Set(overview.match(/PET_SERVICE_[A-Z_]+/g))
    expect([...named]).toContain('PET_SERVICE_API_KEY')
    const PETCTL_HELP = help()
    for (const name of named) expect(PETCTL_HELP, name).toContain(name)
  })

  it('creates a pet with the overview curl example, once its placeholder holds the key', async () => {
    const page = (await session.get('/dashboard')).body
    const script = codeOf(page, 'ex-curl')
    expect(script).toContain('pet_sk_...')
    await shell(script.replace('pet_sk_...', apiKey))
    const list = await t.app.inject({ url: '/v1/pet', headers: { authorization: basic(apiKey) } })
    expect(list.json().data).toMatchObject([{ name: 'Rex', species: 'dog', breed: 'collie' }])
  })

  it("fetches a pet with its page's curl example, the key taken from the environment", async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/pet',
      headers: { authorization: basic(apiKey) },
      payload: { name: 'Tom' },
    })
    const id = created.json().id as number
    const page = (await session.get(`/dashboard/pets/${id}`)).body
    const fetched = JSON.parse(
      await shell(`${codeOf(page, 'pet-curl')} -sS`, { PET_SERVICE_API_KEY: apiKey }),
    )
    expect(fetched).toMatchObject({ id, name: 'Tom' })
  })
})
