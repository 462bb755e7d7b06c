import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, expect, it, type TestContext } from 'vitest'
import {
  type Event,
  NotFoundError,
  PetService,
  type ReconnectInfo,
  webhooks,
} from '../../clients/typescript/src/index.ts'
import { findOrCreateAccount } from '../../src/accounts/accounts-repository.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { TcpProxy } from '../helpers/tcp-proxy.ts'

// The clients (TypeScript, Python, petctl listen) against the real service, started as an
// operator starts it (`pet-service serve`, which also runs the webhook delivery worker), with
// WEBHOOKS_ALLOW_INSECURE=true so deliveries may go to a receiver on loopback. Parsing and
// reconnection edge cases are tested against contract servers (events-contract,
// petctl-listen); here the point is that client and service agree.
//
// Each test first checks that the service documents the routes it uses (its /openapi.json), and
// skips, saying which, where it does not.

const PETCTL = fileURLToPath(new URL('../../bin/petctl.js', import.meta.url))
const PYTHON_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url))
const execFileAsync = promisify(execFile)

interface Delivery {
  headers: IncomingMessage['headers']
  body: string
}

/** A webhook receiver on loopback: records every POST and answers `status`. */
async function startReceiver(status = 204) {
  const received: Delivery[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString()
    })
    req.on('end', () => {
      received.push({ headers: req.headers, body })
      res.writeHead(status, { 'content-type': 'text/plain' }).end('thanks')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Polls until `check` answers something other than undefined (no fixed sleeps). */
async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> {
  let value: T | undefined
  await waitUntil(
    what,
    async () => {
      value = await check()
      return value !== undefined
    },
    ms,
    25,
  )
  return value as T
}

describeDb('clients against the real service: events and webhooks', () => {
  let database: TestDatabase
  let server: ServerProcess
  let url: string
  let apiKey: string
  let otherKey: string
  let client: PetService
  let documented: Set<string>

  beforeAll(async () => {
    database = await createTestDatabase()
    const { account } = await findOrCreateAccount(database.db, 'events-clients@example.com')
    apiKey = (await createApiKey(database.db, { accountId: account.id })).apiKey
    const other = await findOrCreateAccount(database.db, 'events-clients-other@example.com')
    otherKey = (await createApiKey(database.db, { accountId: other.account.id })).apiKey
    server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      WEBHOOKS_ALLOW_INSECURE: 'true',
      RATE_LIMIT_RPS: '0',
    })
    url = `http://127.0.0.1:${server.port}`
    client = new PetService({ apiKey, baseUrl: url })
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    documented = new Set(Object.keys(doc.paths))
  }, 60_000)
  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    await database?.destroy()
  })

  /** Fails at once, naming the routes, when the service does not document them. */
  const needs = (_context: TestContext, ...paths: string[]) => {
    const missing = paths.filter((p) => !documented.has(p))
    expect(missing, 'routes missing from /openapi.json').toEqual([])
  }

  /** The newest event now, so a stream can start right after it (no race with "from now"). */
  const newestEventId = async () => (await client.events.list({ limit: 1 })).data[0]?.id

  it('lists and gets events with the TypeScript client: filters, pages, another account', async (context) => {
    needs(context, '/v1/event', '/v1/event/{id}')
    const pet = await client.pets.create({ name: 'Rex', species: 'dog' })
    await client.pets.update(pet.id, { name: 'Max' })
    for (let i = 0; i < 3; i++) await client.pets.create({ name: `Filler ${i}` })

    const mine = await client.events.list({ type: 'pet.*', object_id: pet.id, limit: 1 }).toArray()
    expect(mine.map((e) => e.type)).toEqual(['pet.updated', 'pet.created'])
    const [updated, created] = mine as [Event, Event]
    expect(updated.data.object).toMatchObject({ id: pet.id, name: 'Max', object: 'pet' })
    expect(updated.data.previous_attributes).toMatchObject({ name: 'Rex' })
    expect(created.data.object).toMatchObject({ id: pet.id, name: 'Rex' })
    expect(await client.events.get(updated.id)).toEqual(updated)

    const all = await client.events.list({ type: ['pet.created', 'pet.updated'], limit: 2 }).toArray()
    expect(all).toHaveLength(5)
    expect([...all].sort((a, b) => (a.id < b.id ? 1 : -1))).toEqual(all) // newest first
    const since = await client.events
      .list({ 'created[gte]': created.created_at, type: 'pet.created' })
      .toArray()
    expect(since.map((e) => e.id)).toContain(created.id)

    const other = new PetService({ apiKey: otherKey, baseUrl: url })
    await expect(other.events.get(updated.id)).rejects.toBeInstanceOf(NotFoundError)
    expect((await other.events.list()).data).toEqual([])
  })

  it('manages an endpoint whose deliveries verify with webhooks.verify, standardwebhooks and Python', async (context) => {
    needs(context, '/v1/webhook_endpoint', '/v1/webhook_endpoint/{id}/rotate_secret', '/v1/event/{id}')
    const receiver = await startReceiver()
    try {
      const endpoint = await client.webhookEndpoints.create({
        url: receiver.url,
        enabled_events: ['pet.*'],
        description: 'the test receiver',
      })
      expect(endpoint).toMatchObject({ object: 'webhook_endpoint', status: 'enabled', url: receiver.url })
      expect(endpoint.secret).toMatch(/^whsec_/)
      expect(endpoint.lastResponse.status).toBe(201)
      expect(await client.webhookEndpoints.get(endpoint.id)).not.toHaveProperty('secret')

      const pet = await client.pets.create({ name: 'Signed' })
      const delivery = await until(
        () => receiver.received.find((d) => JSON.parse(d.body).data.object.id === pet.id),
        'the pet.created delivery',
      )
      const event = await webhooks.verify(delivery.body, delivery.headers, endpoint.secret)
      expect(event).toMatchObject({ type: 'pet.created', id: delivery.headers['webhook-id'] })
      expect(event).toEqual({ ...(await client.events.get(event.id)) })
      expect(
        new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>),
      ).toEqual(event)
      const { stdout } = await execFileAsync(
        'python3',
        [
          '-c',
          'import json, sys\nfrom pet_service import webhooks\na = json.loads(sys.argv[1])\nprint(webhooks.verify(a["body"], a["headers"], a["secret"])["id"])',
          JSON.stringify({ body: delivery.body, headers: delivery.headers, secret: endpoint.secret }),
        ],
        { cwd: PYTHON_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      )
      expect(stdout.trim()).toBe(event.id)
      expect(
        await webhooks
          .verify(delivery.body, delivery.headers, webhooks.generateSecret())
          .catch((e) => e.reason),
      ).toBe('no_valid_signature')

      // The log shows the attempt; a test event and a resend arrive too.
      const attempts = await until(async () => {
        const page = await client.webhookEndpoints.listDeliveries(endpoint.id, { event_id: event.id })
        return page.data.find((d) => d.status === 'succeeded')
      }, 'the logged attempt')
      expect(attempts).toMatchObject({
        object: 'webhook_delivery',
        response_status: 204,
        event_type: 'pet.created',
      })
      const queued = await client.webhookEndpoints.sendTest(endpoint.id)
      expect(queued.lastResponse.status).toBe(202)
      await until(
        () => receiver.received.find((d) => JSON.parse(d.body).type === 'webhook.test'),
        'webhook.test',
      )
      await client.webhookEndpoints.resend(endpoint.id, { event_id: event.id })
      await until(
        () =>
          receiver.received.filter((d) => d.headers['webhook-id'] === event.id).length >= 2
            ? true
            : undefined,
        'the resent delivery',
      )

      // During a rotation both secrets sign.
      const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id, { expire_current_in_hours: 1 })
      expect(rotated.secret).not.toBe(endpoint.secret)
      const next = await client.pets.create({ name: 'Rotated' })
      const second = await until(
        () => receiver.received.find((d) => JSON.parse(d.body).data.object.id === next.id),
        'a delivery after the rotation',
      )
      expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2)
      await webhooks.verify(second.body, second.headers, endpoint.secret)
      await webhooks.verify(second.body, second.headers, rotated.secret)

      const disabled = await client.webhookEndpoints.update(endpoint.id, {
        status: 'disabled',
        description: null,
      })
      expect(disabled).toMatchObject({ status: 'disabled', description: null })
      expect((await client.webhookEndpoints.list()).data.map((e) => e.id)).toContain(endpoint.id)
      expect(await client.webhookEndpoints.delete(endpoint.id)).toMatchObject({
        id: endpoint.id,
        deleted: true,
      })
      await expect(client.webhookEndpoints.get(endpoint.id)).rejects.toBeInstanceOf(NotFoundError)
    } finally {
      await receiver.close()
    }
  })

  it('lists events and manages endpoints with the Python client', async (context) => {
    needs(context, '/v1/event', '/v1/webhook_endpoint')
    const pet = await client.pets.create({ name: 'Py' })
    const script = `
import json, os
from pet_service import PetService
c = PetService(api_key=os.environ["KEY"], base_url=os.environ["URL"])
events = list(c.events.list(type="pet.*", object_id=int(os.environ["PET"]), limit=1))
one = c.events.get(events[0]["id"])
we = c.webhook_endpoints.create(url="http://127.0.0.1:9/hook", enabled_events=["user.*"])
got = c.webhook_endpoints.get(we.id)
changed = c.webhook_endpoints.update(we.id, enabled_events=["*"], description="from Python")
listed = [e.id for e in c.webhook_endpoints.list()]
rotated = c.webhook_endpoints.rotate_secret(we.id, expire_current_in_hours=0)
deleted = c.webhook_endpoints.delete(we.id)
print(json.dumps({"types": [e["type"] for e in events], "one": one["id"] == events[0]["id"],
  "secret": we["secret"][:6], "got": "secret" in got, "changed": [changed["enabled_events"], changed["description"]],
  "listed": we.id in listed, "rotated": rotated["secret"] != we["secret"], "deleted": deleted["deleted"]}))
`
    const { stdout } = await execFileAsync('python3', ['-c', script], {
      cwd: PYTHON_DIR,
      env: { ...process.env, KEY: apiKey, URL: url, PET: String(pet.id), PYTHONDONTWRITEBYTECODE: '1' },
    })
    expect(JSON.parse(stdout)).toEqual({
      types: ['pet.created'],
      one: true,
      secret: 'whsec_',
      got: false,
      changed: [['*'], 'from Python'],
      listed: true,
      rotated: true,
      deleted: true,
    })
  })

  it('streams events live with the TypeScript client, resuming after a cut connection', async (context) => {
    needs(context, '/v1/event/stream')
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port })
    const controller = new AbortController()
    try {
      const through = new PetService({ apiKey, baseUrl: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 })
      const reconnects: ReconnectInfo[] = []
      const stream = through.events.stream(
        { type: 'pet.created' },
        {
          signal: controller.signal,
          lastEventId: await newestEventId(),
          onReconnect: (info) => reconnects.push(info),
        },
      )
      const seen: Event[] = []
      const reading = (async () => {
        for await (const event of stream) seen.push(event)
      })()
      const names = ['S1', 'S2', 'S3', 'S4']
      await client.pets.create({ name: names[0]! })
      await client.pets.update((await client.pets.create({ name: names[1]! })).id, { name: 'not listed' })
      await until(() => (seen.length === 2 ? true : undefined), 'two streamed events')
      await proxy.refuse() // the connection is cut; new ones are refused for a while
      await client.pets.create({ name: names[2]! })
      await proxy.restore()
      await client.pets.create({ name: names[3]! })
      await until(() => (seen.length === 4 ? true : undefined), 'the events after the cut', 30_000)
      controller.abort()
      await reading
      expect(seen.map((e) => (e.data.object as { name: string }).name)).toEqual(names)
      expect(seen.every((e) => e.type === 'pet.created')).toBe(true)
      expect(reconnects.length).toBeGreaterThan(0)
      expect(stream.lastEventId).toBe(seen[3]!.id)
    } finally {
      controller.abort()
      await proxy.close()
    }
  })

  it('petctl listen forwards live events, signed, to a receiver that verifies with standardwebhooks', async (context) => {
    needs(context, '/v1/event/stream')
    const receiver = await startReceiver(200)
    const configHome = mkdtempSync(join(tmpdir(), 'petctl-listen-'))
    const child = spawn(
      process.execPath,
      [
        PETCTL,
        'listen',
        '--events',
        'user.*',
        '--forward-to',
        receiver.url,
        '--last-event-id',
        (await newestEventId())!,
      ],
      // Its signing secret is kept in a config home of this test's, not the real ~/.config.
      {
        env: {
          ...process.env,
          XDG_CONFIG_HOME: configHome,
          PET_SERVICE_URL: url,
          PET_SERVICE_API_KEY: apiKey,
        },
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    try {
      const secret = await until(() => stderr.match(/whsec_\S+/)?.[0], 'the session secret')
      const user = await client.users.create({ name: 'Listened' })
      await client.users.update(user.id, { name: 'Listened again' })
      await client.pets.create({ name: 'not a user' })
      await until(
        () => (receiver.received.length === 2 && /-> POST .* 200 OK/.test(stdout) ? true : undefined),
        'two',
      )
      const verified = receiver.received.map((d) =>
        new Webhook(secret).verify(d.body, d.headers as Record<string, string>),
      ) as Event[]
      expect(verified.map((e) => e.type)).toEqual(['user.created', 'user.updated'])
      expect(verified[0]).toEqual({ ...(await client.events.get(verified[0]!.id)) })
      expect(stdout).toMatch(new RegExp(`^\\S+Z {2}user\\.created {2}${verified[0]!.id} {2}${user.id}$`, 'm'))
    } finally {
      child.kill('SIGINT')
      expect(await exited).toBe(0)
      await receiver.close()
      rmSync(configHome, { recursive: true, force: true })
    }
  })
})
