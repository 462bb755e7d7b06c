import { afterAll, beforeAll, expect, it } from 'vitest'
import { startWebhookWorker } from '../../src/app.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { petctl } from '../helpers/petctl.ts'
import { waitUntil } from '../helpers/poll.ts'
import { startReceiver } from '../webhooks/receiver.ts'

// `petctl events list|get|resend` against the real service, its delivery worker running so a
// resent event reaches a receiver on loopback (WEBHOOKS_ALLOW_INSECURE=true).

describeDb('petctl events', () => {
  let t: TestApp
  let worker: ReturnType<typeof startWebhookWorker>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let env: Record<string, string>

  beforeAll(async () => {
    // The worker adds a hook, so it starts before the app is ready.
    t = await createTestApp({ WEBHOOKS_ALLOW_INSECURE: 'true' }, { ready: false })
    worker = startWebhookWorker(t.app, t.database)
    receiver = await startReceiver()
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    env = { PET_SERVICE_URL: url, PET_SERVICE_API_KEY: (await t.newAccount()).apiKey }
  })
  afterAll(async () => {
    await worker?.stop()
    await receiver?.close()
    await t?.close()
  })

  const json = async (argv: string[], as = env) => {
    const result = await petctl([...argv, '--json'], as)
    expect(result.code, result.stderr).toBe(0)
    return JSON.parse(result.stdout)
  }

  it('lists events newest first, filtered by type and object, as a table or as the API JSON', async () => {
    const pet = await json(['pets', 'create', '--name', 'Rex'])
    await json(['pets', 'update', String(pet.id), '--name', 'Max'])
    await json(['users', 'create', '--name', 'Ann'])

    const page = await json(['events', 'list', '--type', 'pet.*', '--object-id', String(pet.id)])
    expect(page).toMatchObject({ object: 'list', has_more: false })
    expect(page.data.map((e: { type: string }) => e.type)).toEqual(['pet.updated', 'pet.created'])
    const both = await json(['events', 'list', '--type', 'pet.created,user.created'])
    expect(both.data.map((e: { type: string }) => e.type)).toEqual(['user.created', 'pet.created'])

    const table = await petctl(['events', 'list', '--limit', '2'], env)
    const lines = table.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+OBJECT_ID\s+CREATED_AT$/)
    expect(lines[1]).toMatch(/^evt_\w+\s+user\.created\s+usr_\w+\s+\S+Z$/)
    expect(lines[2]).toMatch(new RegExp(`^evt_\\w+\\s+pet\\.updated\\s+${pet.id}\\s`))
    expect(lines[3]).toMatch(/^\(more: --starting-after evt_\w+, or --all\)$/)
    const all = await json(['events', 'list', '--all'])
    expect(all.map((e: { type: string }) => e.type)).toEqual(['user.created', 'pet.updated', 'pet.created'])
    const since = await json(['events', 'list', '--created-gte', page.data[0].created_at, '--type', 'pet.*'])
    expect(since.data.map((e: { id: string }) => e.id)).toContain(page.data[0].id)
  })

  it('gets an event with the object as it was, and exits 1 for an event not of this account', async () => {
    const pet = await json(['pets', 'create', '--name', 'Shown'])
    const [created] = (await json(['events', 'list', '--object-id', String(pet.id)])).data
    expect(await json(['events', 'get', created.id])).toEqual(created)
    const table = await petctl(['events', 'get', created.id], env)
    expect(table.stdout).toMatch(/^type\s+pet\.created$/m)

    const other = { ...env, PET_SERVICE_API_KEY: (await t.newAccount()).apiKey }
    const hidden = await petctl(['events', 'get', created.id], other)
    expect(hidden.code).toBe(1)
    expect(hidden.stdout).toBe('')
    expect(hidden.stderr).toMatch(/code event_not_found, status 404/)
    const unknown = await petctl(['events', 'get', 'evt_nosuchevent'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('status 404')
  })

  it('resends an event to one endpoint, which receives it again with the same id', async () => {
    const endpoint = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'user.*'])
    const user = await json(['users', 'create', '--name', 'Resent'])
    const [event] = (await json(['events', 'list', '--object-id', user.id])).data
    await waitUntil('the first delivery', async () => receiver.ids.has(event.id))

    const queued = await json(['events', 'resend', event.id, '--webhook-endpoint', endpoint.id])
    expect(queued).toEqual({
      object: 'webhook_delivery_request',
      endpoint_id: endpoint.id,
      event_id: event.id,
      status: 'pending',
    })
    await waitUntil(
      'the resent delivery',
      async () => receiver.received.filter((r) => r.headers['webhook-id'] === event.id).length === 2,
    )
    const said = await petctl(['events', 'resend', event.id, '--webhook-endpoint', endpoint.id], env)
    expect(said.stdout).toBe(
      `Queued ${event.id} for ${endpoint.id}: petctl webhooks deliveries ${endpoint.id} --event-id ${event.id} shows its attempts.\n`,
    )
  })

  it('prints the problem for a list the API refuses (an unknown type, a key without read:events), and exits 1', async () => {
    const unknown = await petctl(['events', 'list', '--type', 'pet.adopted'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toContain('Unknown event type "pet.adopted"')
    expect(unknown.stderr).toContain('param type, status 400')
    const { apiKey } = await t.newAccount({ scopes: ['read:pets'] })
    const scoped = await petctl(['events', 'list'], { ...env, PET_SERVICE_API_KEY: apiKey })
    expect(scoped.code).toBe(1)
    expect(scoped.stderr).toContain('read:events')
  })

  it('refuses a resend the API or the command line cannot take, saying what to fix', async () => {
    const endpoint = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'pet.*'])
    const unknown = await petctl(
      ['events', 'resend', 'evt_nosuchevent', '--webhook-endpoint', endpoint.id],
      env,
    )
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('Error: No event evt_nosuchevent in your account.')
    expect(unknown.stderr).toContain('code event_not_found, param event_id, status 404')
    const noEndpoint = await petctl(['events', 'resend', 'evt_nosuchevent'], env)
    expect(noEndpoint.code).toBe(2)
    expect(noEndpoint.stderr).toContain("required option '--webhook-endpoint <id>' not specified")
    const malformed = await petctl(['events', 'get', '42'], env)
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toContain('An event id starts with evt_')
    const badEndpoint = await petctl(['events', 'resend', 'evt_x', '--webhook-endpoint', 'https://x'], env)
    expect(badEndpoint.code).toBe(2)
    expect(badEndpoint.stderr).toContain('A webhook endpoint id starts with we_')
  })

  it('gives each events command its help, with an example', async () => {
    for (const command of [['events'], ['events', 'list'], ['events', 'get'], ['events', 'resend']]) {
      const help = await petctl([...command, '--help'], {})
      expect(help.code, command.join(' ')).toBe(0)
      expect(help.stdout, command.join(' ')).toMatch(
        new RegExp(`\\nExamples?:\\n {2}petctl ${command.join(' ')}`),
      )
    }
  })
})
