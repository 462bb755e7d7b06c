import { afterAll, beforeAll, expect, it } from 'vitest'
import { EVENT_TYPES } from '../../clients/typescript/src/index.ts'
import { EVENT_TYPES as SERVICE_EVENT_TYPES } from '../../src/events/event.ts'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { petctl } from '../helpers/petctl.ts'

// `petctl trigger EVENT_TYPE` against the real service: each type it offers makes the service
// record that event, and the id it prints is that event's.

describeDb('petctl trigger', () => {
  let live: LiveServer
  let env: Record<string, string>

  beforeAll(async () => {
    live = await startLiveServer()
    env = { PET_SERVICE_URL: live.url, PET_SERVICE_API_KEY: (await live.newAccount()).apiKey }
  })
  afterAll(() => live.close())

  it("offers exactly the service's event types (the client's EVENT_TYPES, checked against src/events)", () => {
    expect([...EVENT_TYPES]).toEqual([...SERVICE_EVENT_TYPES])
  })

  it.each(EVENT_TYPES)('triggers %s and prints the id of the event the service recorded', async (type) => {
    const { code, stdout, stderr } = await petctl(['trigger', type], env)
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^evt_\w+\n$/)
    expect(stderr).toMatch(/^Created (pet|user) /)
    const shown = await petctl(['events', 'get', stdout.trim(), '--json'], env)
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: stdout.trim(), object: 'event', type })
  })

  it('prints the event as JSON with --json: the object it is about, and what an update changed', async () => {
    const updated = await petctl(['trigger', 'order.updated', '--json'], env)
    expect(updated.code, updated.stderr).toBe(0)
    const event = JSON.parse(updated.stdout)
    expect(event).toMatchObject({
      object: 'event',
      type: 'order.updated',
      data: { object: { object: 'order', status: 'approved' }, previous_attributes: { status: 'placed' } },
    })
    expect(updated.stderr).toMatch(
      /Created pet \d+\.\nCreated order \d+\.\nUpdated order \d+: status approved\./,
    )
    const deleted = JSON.parse((await petctl(['trigger', 'pet.deleted', '--json'], env)).stdout)
    const gone = await petctl(['pets', 'get', String(deleted.data.object.id)], env)
    expect(gone.stderr).toContain('code pet_not_found')
  })

  it('refuses an unknown event type with the list of those it takes, before any request, and exits 2', async () => {
    const offline = { ...env, PET_SERVICE_URL: 'http://127.0.0.1:9' }
    const unknown = await petctl(['trigger', 'pet.adopted'], offline)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(
      `petctl trigger takes one of ${EVENT_TYPES.join(', ')}, not pet.adopted.`,
    )
    const test = await petctl(['trigger', 'webhook.test'], offline)
    expect(test.code).toBe(2)
    expect(test.stderr).toContain('petctl webhooks test ID')
    expect((await petctl(['trigger'], offline)).code).toBe(2)
  })

  it('exits 1 with the problem when the key may not read events', async () => {
    const { apiKey } = await live.newAccount({ scopes: ['write:pets'] })
    const refused = await petctl(['trigger', 'pet.created'], { ...env, PET_SERVICE_API_KEY: apiKey })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^Created pet \d+\.\nError: /)
    expect(refused.stderr).toContain('status 403')
  })

  it('documents every event type in its help, with an example', async () => {
    const help = await petctl(['trigger', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`one of ${EVENT_TYPES.join(', ')}`)
    expect(help.stdout).toMatch(/\nExamples:\n {2}petctl trigger pet\.created\n/)
  })
})
