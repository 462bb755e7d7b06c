import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startWebhookWorker } from '../../src/app.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { petctl } from '../helpers/petctl.ts'
import { waitUntil } from '../helpers/poll.ts'
import { startReceiver } from '../webhooks/receiver.ts'

// `petctl webhooks list|create|get|update|delete|rotate-secret|deliveries|test` against the real
// service, its delivery worker sending to a receiver on loopback (WEBHOOKS_ALLOW_INSECURE=true).

describeDb('petctl webhooks', () => {
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

  it('creates an endpoint whose deliveries verify with the secret it prints once', async () => {
    const created = await petctl(
      [
        'webhooks',
        'create',
        '--endpoint-url',
        receiver.url,
        '--events',
        'pet.created, user.*',
        '--description',
        'mine',
      ],
      env,
    )
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toMatch(/^id\s+we_\w+$/m)
    expect(created.stdout).toMatch(/^enabled_events\s+pet\.created, user\.\*$/m)
    expect(created.stderr).toContain('Store the secret now: it is not shown again')
    const id = created.stdout.match(/^id\s+(we_\w+)$/m)![1]!
    const secret = created.stdout.match(/^secret\s+(whsec_\S+)$/m)![1]!

    const pet = await json(['pets', 'create', '--name', 'Delivered'])
    await waitUntil('the pet.created delivery', async () =>
      receiver.received.some((r) => JSON.parse(r.body).data.object.id === pet.id),
    )
    const delivery = receiver.received.find((r) => JSON.parse(r.body).data.object.id === pet.id)!
    expect(
      new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>),
    ).toMatchObject({
      type: 'pet.created',
    })
    const shown = await json(['webhooks', 'get', id])
    expect(shown).toMatchObject({
      id,
      url: receiver.url,
      enabled_events: ['pet.created', 'user.*'],
      description: 'mine',
    })
    expect(shown).not.toHaveProperty('secret')
  })

  it('lists, updates and deletes endpoints, as tables or as the API JSON', async () => {
    const own = { ...env, PET_SERVICE_API_KEY: (await t.newAccount()).apiKey }
    const first = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', '*'], own)
    const second = await json(
      ['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'order.*'],
      own,
    )
    expect(first.secret).toMatch(/^whsec_/)

    const listed = await json(['webhooks', 'list'], own)
    expect(listed.data.map((e: { id: string }) => e.id)).toEqual([second.id, first.id])
    const table = await petctl(['webhooks', 'list', '--limit', '1'], own)
    expect(table.stdout.split('\n')[0]).toMatch(
      /^ID\s+URL\s+ENABLED_EVENTS\s+STATUS\s+DESCRIPTION\s+CREATED_AT$/,
    )
    expect(table.stdout).toMatch(new RegExp(`^${second.id}\\s+\\S+\\s+order\\.\\*\\s+enabled\\s+-\\s`, 'm'))
    expect(table.stdout).toContain(`(more: --starting-after ${second.id}, or --all)`)
    expect(await json(['webhooks', 'list', '--all', '--limit', '1'], own)).toHaveLength(2)

    const updated = await json(
      [
        'webhooks',
        'update',
        first.id,
        '--events',
        'pet.*,user.deleted',
        '--status',
        'disabled',
        '--description',
        'paused',
      ],
      own,
    )
    expect(updated).toMatchObject({
      enabled_events: ['pet.*', 'user.deleted'],
      status: 'disabled',
      description: 'paused',
    })
    const cleared = await json(
      ['webhooks', 'update', first.id, '--description', '', '--status', 'enabled'],
      own,
    )
    expect(cleared).toMatchObject({ description: null, status: 'enabled' })

    expect(await json(['webhooks', 'delete', first.id], own)).toEqual({
      id: first.id,
      object: 'webhook_endpoint',
      deleted: true,
    })
    expect((await petctl(['webhooks', 'delete', second.id], own)).stdout).toBe(
      `Deleted webhook endpoint ${second.id}.\n`,
    )
    expect((await petctl(['webhooks', 'list'], own)).stdout).toBe('No webhook endpoints.\n')
  })

  it('rotates the secret: both sign for the hours asked, the new one printed once', async () => {
    // An account of its own: its deliveries are this endpoint's alone.
    const own = { ...env, PET_SERVICE_API_KEY: (await t.newAccount()).apiKey }
    const endpoint = await json(
      ['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'user.created'],
      own,
    )
    const rotated = await json(
      ['webhooks', 'rotate-secret', endpoint.id, '--expire-current-in-hours', '1'],
      own,
    )
    expect(rotated).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/) })
    expect(rotated.secret).not.toBe(endpoint.secret)
    const user = await json(['users', 'create', '--name', 'Rotated'], own)
    await waitUntil('the delivery signed twice', async () =>
      receiver.received.some((r) => JSON.parse(r.body).data.object.id === user.id),
    )
    const delivery = receiver.received.find((r) => JSON.parse(r.body).data.object.id === user.id)!
    for (const secret of [endpoint.secret, rotated.secret])
      expect(() =>
        new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>),
      ).not.toThrow()
    const table = await petctl(
      ['webhooks', 'rotate-secret', endpoint.id, '--expire-current-in-hours', '0'],
      own,
    )
    expect(table.stdout).toMatch(/^secret\s+whsec_\S+$/m)
  })

  it('sends a test event, which the delivery log then shows', async () => {
    const endpoint = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'order.*'])
    const queued = await json(['webhooks', 'test', endpoint.id])
    expect(queued).toMatchObject({
      object: 'webhook_delivery_request',
      endpoint_id: endpoint.id,
      event_id: expect.stringMatching(/^evt_/),
      status: 'pending',
    })
    await waitUntil('the logged attempt', async () => {
      const log = await json(['webhooks', 'deliveries', endpoint.id, '--event-id', queued.event_id])
      return log.data.some((d: { status: string }) => d.status === 'succeeded')
    })
    const [attempt] = (await json(['webhooks', 'deliveries', endpoint.id, '--status', 'succeeded'])).data
    expect(attempt).toMatchObject({
      event_type: 'webhook.test',
      event_id: queued.event_id,
      response_status: 200,
    })
    const table = await petctl(['webhooks', 'deliveries', endpoint.id], env)
    expect(table.stdout.split('\n')[0]).toMatch(
      /^ID\s+EVENT_TYPE\s+EVENT_ID\s+ATTEMPT\s+STATUS\s+RESPONSE_STATUS\s+LATENCY_MS\s+ATTEMPTED_AT$/,
    )
    expect(table.stdout).toMatch(
      new RegExp(`^wd_\\w+\\s+webhook\\.test\\s+${queued.event_id}\\s+1\\s+succeeded\\s+200\\s`, 'm'),
    )
    const said = await petctl(['webhooks', 'test', endpoint.id], env)
    expect(said.stdout).toMatch(
      new RegExp(
        `^Queued evt_\\w+ for ${endpoint.id}: petctl webhooks deliveries ${endpoint.id} --event-id evt_\\w+ shows its attempts\\.\\n$`,
      ),
    )
  })

  it("answers another account's endpoint as not found, and exits 1", async () => {
    const endpoint = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', '*'])
    const other = { ...env, PET_SERVICE_API_KEY: (await t.newAccount()).apiKey }
    for (const argv of [
      ['webhooks', 'get', endpoint.id],
      ['webhooks', 'update', endpoint.id, '--status', 'disabled'],
      ['webhooks', 'delete', endpoint.id],
      ['webhooks', 'rotate-secret', endpoint.id],
      ['webhooks', 'deliveries', endpoint.id],
      ['webhooks', 'test', endpoint.id],
    ]) {
      const refused = await petctl(argv, other)
      expect(refused.code, argv.join(' ')).toBe(1)
      expect(refused.stdout, argv.join(' ')).toBe('')
      expect(refused.stderr, argv.join(' ')).toMatch(/status 404/)
    }
    expect((await json(['webhooks', 'get', endpoint.id])).status).toBe('enabled')
  })

  it('prints the problem the API answers for a refused URL or event type, and exits 1', async () => {
    const ftp = await petctl(
      ['webhooks', 'create', '--endpoint-url', 'ftp://example.com/x', '--events', '*'],
      env,
    )
    expect(ftp.code).toBe(1)
    expect(ftp.stderr).toContain('param url')
    const unknown = await petctl(
      ['webhooks', 'create', '--endpoint-url', receiver.url, '--events', 'pet.adopted'],
      env,
    )
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('unknown event types: pet.adopted')
  })

  it('says which scope a key lacks to list endpoints or their deliveries, and exits 1', async () => {
    const endpoint = await json(['webhooks', 'create', '--endpoint-url', receiver.url, '--events', '*'])
    const { apiKey } = await t.newAccount({ scopes: ['read:pets'] })
    for (const argv of [
      ['webhooks', 'list'],
      ['webhooks', 'deliveries', endpoint.id],
    ]) {
      const refused = await petctl(argv, { ...env, PET_SERVICE_API_KEY: apiKey })
      expect(refused.code, argv.join(' ')).toBe(1)
      expect(refused.stderr, argv.join(' ')).toContain('read:webhooks')
      expect(refused.stderr, argv.join(' ')).toContain('status 403')
    }
  })

  it('refuses a command line it cannot send, before any request, and exits 2', async () => {
    const offline = { ...env, PET_SERVICE_URL: 'http://127.0.0.1:9' }
    for (const [argv, message] of [
      [['webhooks', 'create', '--events', '*'], 'needs --endpoint-url URL and --events TYPES'],
      [
        ['webhooks', 'create', '--endpoint-url', receiver.url, '--events', ' , '],
        '--events needs at least one type',
      ],
      [['webhooks', 'update', 'we_x'], 'Nothing to change'],
      [['webhooks', 'update', 'we_x', '--status', 'paused'], '--status must be one of enabled, disabled'],
      [['webhooks', 'get', 'evt_x'], 'A webhook endpoint id starts with we_'],
      [
        ['webhooks', 'rotate-secret', 'we_x', '--expire-current-in-hours', 'soon'],
        '--expire-current-in-hours must be',
      ],
      [['webhooks', 'deliveries', 'we_x', '--status', 'lost'], '--status must be one of pending'],
      [['webhooks', 'deliveries', 'we_x', '--event-id', '7'], 'An event id starts with evt_'],
      [['webhooks', 'test'], "missing required argument 'id'"],
      [['webhooks', 'list', '--limit', 'ten'], '--limit must be a whole number'],
    ] as const) {
      const refused = await petctl([...argv], offline)
      expect(refused.code, argv.join(' ')).toBe(2)
      expect(refused.stderr, argv.join(' ')).toContain(message)
    }
  })

  it('gives each webhooks command its help, with an example', async () => {
    const commands = ['list', 'create', 'get', 'update', 'delete', 'rotate-secret', 'deliveries', 'test']
    const group = await petctl(['webhooks', '--help'], {})
    expect(group.stdout).toMatch(new RegExp(commands.join('[\\s\\S]*')))
    for (const command of [[], ...commands.map((c) => [c])]) {
      const help = await petctl(['webhooks', ...command, '--help'], {})
      const name = ['petctl', 'webhooks', ...command].join(' ')
      expect(help.code, name).toBe(0)
      expect(help.stdout, name).toMatch(new RegExp(`\\nExamples?:\\n {2}${name}`))
    }
  })
})
