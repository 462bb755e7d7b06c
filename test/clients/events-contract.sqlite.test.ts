import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import {
  AuthenticationError,
  type Event,
  PetService,
  type ReconnectInfo,
} from '../../clients/typescript/src/index.ts'
import { type SseMessage, SseParser } from '../../clients/typescript/src/sse.ts'
import { waitUntil } from '../helpers/poll.ts'

// The TypeScript client's events and webhook endpoint namespaces against a local server that
// speaks the API's contract (docs/api.md, "Events"): request shapes, pagination, and the
// Server-Sent Events stream's parsing and reconnection, with failures a real service rarely
// shows on demand (a dropped connection mid-stream, silence, a 503). The same operations
// against the real service are in events-live.sqlite.test.ts.

const event = (n: number, type = 'pet.created'): Event => ({
  id: `evt_${String(n).padStart(4, '0')}`,
  object: 'event',
  type,
  created_at: new Date(Date.UTC(2026, 10, 24, 0, 0, n)).toISOString(),
  data: { object: { id: n, object: 'pet', name: `Pet ${n}` } },
})

const sse = (e: Event) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`

interface Seen {
  method: string
  url: URL
  headers: IncomingMessage['headers']
  body: string
}

type Handler = (req: Seen, res: ServerResponse, n: number) => void

const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** A contract server: `handle` answers each request; every request is recorded. */
async function contractServer(handle: Handler) {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString()
    })
    req.on('end', () => {
      const request = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body,
      }
      const n = seen.push(request) - 1
      handle(request, res, n)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const handle_ = {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(handle_)
  return handle_
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' })
  res.end(JSON.stringify(body))
}

const streamHead = (res: ServerResponse) =>
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })

const client = (url: string) => new PetService({ apiKey: 'pet_sk_contract', baseUrl: url, maxRetries: 0 })

/** The first `count` events of an iterable, then stop (which closes the stream). */
async function take<T>(iterable: AsyncIterable<T>, count: number): Promise<T[]> {
  const out: T[] = []
  if (count === 0) return out
  for await (const item of iterable) {
    out.push(item)
    if (out.length >= count) break
  }
  return out
}

describe('SseParser (text/event-stream as the HTML standard defines it)', () => {
  const parse = (chunks: string[]) => {
    const messages: SseMessage[] = []
    const comments: string[] = []
    const retries: number[] = []
    const parser = new SseParser({
      message: (m) => messages.push(m),
      comment: (c) => comments.push(c),
      retry: (ms) => retries.push(ms),
    })
    for (const chunk of chunks) parser.feed(chunk)
    return { messages, comments, retries }
  }

  it('reads id, event and data, joins data lines, and skips comments and unknown fields', () => {
    const { messages, comments } = parse([
      ': heartbeat\n\nid: evt_1\nevent: pet.created\ndata: {"a":\ndata: 1}\nfoo: bar\n\n',
    ])
    expect(comments).toEqual(['heartbeat'])
    expect(messages).toEqual([{ id: 'evt_1', event: 'pet.created', data: '{"a":\n1}' }])
  })

  it('accepts CRLF, CR and LF line ends, split anywhere between chunks, and a leading BOM', () => {
    const text = '\uFEFFid: evt_1\r\ndata: one\r\n\r\nid:evt_2\rdata:two\r\rid: evt_3\ndata: three\n\n'
    for (let cut = 0; cut <= text.length; cut++) {
      const { messages } = parse([text.slice(0, cut), text.slice(cut)])
      expect(
        messages.map((m) => [m.id, m.data]),
        `cut at ${cut}`,
      ).toEqual([
        ['evt_1', 'one'],
        ['evt_2', 'two'],
        ['evt_3', 'three'],
      ])
    }
    const oneByOne = parse([...text])
    expect(oneByOne.messages).toHaveLength(3)
  })

  it('dispatches nothing without data, keeps the last id, defaults the type to message, reads retry', () => {
    const { messages, retries } = parse(['id: evt_9\n\nretry: 1500\ndata: x\n\n'])
    expect(messages).toEqual([{ id: 'evt_9', event: 'message', data: 'x' }])
    expect(retries).toEqual([1500])
  })
})

describe('client.events against the contract', () => {
  it('lists newest first across pages, sending the filters as the API names them', async () => {
    const all = [5, 4, 3, 2, 1].map((n) => event(n))
    const server = await contractServer((req, res) => {
      const after = req.url.searchParams.get('starting_after')
      const start = after === null ? 0 : all.findIndex((e) => e.id === after) + 1
      const limit = Number(req.url.searchParams.get('limit') ?? 10)
      const data = all.slice(start, start + limit)
      json(res, 200, { object: 'list', data, has_more: start + limit < all.length, url: '/v1/event' })
    })
    const events = client(server.url).events
    const list = events.list({ limit: 2, type: ['pet.*', 'user.deleted'], 'created[gte]': 1795478400 })
    const page = await list
    expect(page.data.map((e) => e.id)).toEqual(['evt_0005', 'evt_0004'])
    expect((await list.toArray()).map((e) => e.id)).toEqual(all.map((e) => e.id))
    const first = server.seen[0]!
    expect(first.url.pathname).toBe('/v1/event')
    expect(first.url.searchParams.getAll('type')).toEqual(['pet.*', 'user.deleted'])
    expect(first.url.searchParams.get('created[gte]')).toBe('1795478400')
    expect(first.headers.authorization).toBe(`Basic ${btoa('pet_sk_contract:')}`)
    expect(server.seen.slice(1).map((s) => s.url.searchParams.get('starting_after'))).toContain('evt_0004')
  })

  it('gets one event by id', async () => {
    const server = await contractServer((_req, res) => json(res, 200, event(1)))
    const got = await client(server.url).events.get('evt_0001')
    expect(got).toEqual(event(1))
    expect(server.seen[0]!.url.pathname).toBe('/v1/event/evt_0001')
  })
})

describe('client.events.stream against the contract', () => {
  it('yields each event once and in order across a dropped connection, resuming with Last-Event-ID', async () => {
    const server = await contractServer((req, res, n) => {
      streamHead(res)
      if (n === 0) {
        // Two events in one write, a third cut off mid-message, then the connection drops.
        res.write(`: heartbeat\n\n${sse(event(1))}${sse(event(2))}${sse(event(3)).slice(0, 30)}`)
        setTimeout(() => res.socket?.destroy(), 20)
        return
      }
      const after = req.headers['last-event-id']
      const rest = [3, 4].map((i) => event(i)).filter((e) => after === undefined || e.id > after)
      res.write(rest.map(sse).join(''))
    })
    const reconnects: ReconnectInfo[] = []
    const stream = client(server.url).events.stream(
      { type: 'pet.*' },
      { onReconnect: (info) => reconnects.push(info) },
    )
    const got = await take(stream, 4)
    expect(got.map((e) => e.id)).toEqual(['evt_0001', 'evt_0002', 'evt_0003', 'evt_0004'])
    expect(got[0]).toEqual(event(1))
    expect(stream.lastEventId).toBe('evt_0004')
    expect(server.seen).toHaveLength(2)
    expect(server.seen[0]!.headers['last-event-id']).toBeUndefined()
    expect(server.seen[0]!.headers.accept).toBe('text/event-stream')
    expect(server.seen[0]!.url.pathname).toBe('/v1/event/stream')
    expect(server.seen[0]!.url.searchParams.get('type')).toBe('pet.*')
    expect(server.seen[1]!.headers['last-event-id']).toBe('evt_0002')
    expect(reconnects).toHaveLength(1)
    expect(reconnects[0]).toMatchObject({ attempt: 1, lastEventId: 'evt_0002' })
  })

  it('starts after the lastEventId given, and keeps going through 503s until the service is back', async () => {
    const server = await contractServer((_req, res, n) => {
      if (n < 2) {
        json(res, 503, { status: 503, code: 'service_unavailable', detail: 'try again' })
        return
      }
      streamHead(res)
      res.write(sse(event(8)))
    })
    const stream = client(server.url).events.stream({}, { lastEventId: 'evt_0007' })
    expect((await take(stream, 1)).map((e) => e.id)).toEqual(['evt_0008'])
    expect(server.seen.map((s) => s.headers['last-event-id'])).toEqual(['evt_0007', 'evt_0007', 'evt_0007'])
  })

  it('replaces a connection that goes silent (no heartbeat) after idleTimeout', async () => {
    const server = await contractServer((_req, res, n) => {
      streamHead(res)
      if (n === 0)
        res.write(sse(event(1))) // then nothing, connection kept open
      else res.write(sse(event(2)))
    })
    const reconnects: ReconnectInfo[] = []
    const stream = client(server.url).events.stream(
      {},
      { idleTimeout: 300, onReconnect: (info) => reconnects.push(info) },
    )
    expect((await take(stream, 2)).map((e) => e.id)).toEqual(['evt_0001', 'evt_0002'])
    expect(reconnects[0]!.error.message).toMatch(/No data, not even a heartbeat, for 300 ms/)
    expect(server.seen[1]!.headers['last-event-id']).toBe('evt_0001')
  })

  it('does not take a slow consumer for a silent connection', async () => {
    let heartbeats = 0
    const server = await contractServer((_req, res) => {
      streamHead(res)
      res.write(sse(event(1)) + sse(event(2)))
      const timer = setInterval(() => {
        heartbeats++
        res.write(': heartbeat\n\n')
      }, 20)
      res.on('close', () => clearInterval(timer))
    })
    const reconnects: ReconnectInfo[] = []
    const stream = client(server.url).events.stream(
      {},
      { idleTimeout: 150, onReconnect: (info) => reconnects.push(info) },
    )
    const got: string[] = []
    for await (const e of stream) {
      got.push(e.id)
      if (got.length === 2) break
      // Busy for well over idleTimeout while the service keeps sending heartbeats.
      const until = heartbeats + 15
      await waitUntil('15 more heartbeats', () => heartbeats >= until, 15_000, 10)
    }
    expect(got).toEqual(['evt_0001', 'evt_0002'])
    expect(reconnects).toEqual([])
    expect(server.seen).toHaveLength(1)
  })

  it('throws a refusal that would not change (401) without reconnecting', async () => {
    const server = await contractServer((_req, res) =>
      json(res, 401, { status: 401, code: 'api_key_revoked', detail: 'This API key was revoked.' }),
    )
    const error = await take(client(server.url).events.stream(), 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error).toMatchObject({ code: 'api_key_revoked' })
    expect(server.seen).toHaveLength(1)
  })

  it('gives up after maxRetries failed reconnections in a row', async () => {
    const server = await contractServer((_req, res) => json(res, 503, { status: 503, detail: 'down' }))
    const error = await take(client(server.url).events.stream({}, { maxRetries: 2 }), 1).catch((e) => e)
    expect(error).toMatchObject({ status: 503 })
    expect(server.seen).toHaveLength(3)
  })

  it('ends quietly when its signal aborts, mid-wait for the next event', async () => {
    const server = await contractServer((_req, res) => {
      streamHead(res)
      res.write(sse(event(1)))
    })
    const controller = new AbortController()
    const got: string[] = []
    for await (const e of client(server.url).events.stream({}, { signal: controller.signal })) {
      got.push(e.id)
      setTimeout(() => controller.abort(), 50)
    }
    expect(got).toEqual(['evt_0001'])
  })
})

describe('client.webhookEndpoints against the contract', () => {
  it('sends each operation to its route, with JSON bodies', async () => {
    const endpoint = {
      id: 'we_1',
      object: 'webhook_endpoint',
      url: 'https://example.com/hook',
      enabled_events: ['pet.*'],
      description: null,
      status: 'enabled',
      disabled_reason: null,
      created_at: '2026-11-24T00:00:00.000Z',
      updated_at: '2026-11-24T00:00:00.000Z',
    }
    const server = await contractServer((req, res) => {
      const path = req.url.pathname
      if (path.endsWith('/delivery')) json(res, 200, { object: 'list', data: [], has_more: false, url: path })
      else if (path.endsWith('/resend') || path.endsWith('/test')) json(res, 202, {})
      else if (req.method === 'GET' && path === '/v1/webhook_endpoint')
        json(res, 200, { object: 'list', data: [endpoint], has_more: false, url: path })
      else json(res, req.method === 'POST' && path === '/v1/webhook_endpoint' ? 201 : 200, endpoint)
    })
    const we = client(server.url).webhookEndpoints
    await we.create({ url: endpoint.url, enabled_events: ['pet.*'], description: 'mine' })
    await we.get('we_1')
    await we.update('we_1', { status: 'disabled' })
    expect((await we.list({ limit: 5 })).data).toEqual([endpoint])
    await we.rotateSecret('we_1', { expire_current_in_hours: 0 })
    await we.listDeliveries('we_1', { event_id: 'evt_1', status: 'failed' })
    await we.resend('we_1', { event_id: 'evt_1' })
    await we.sendTest('we_1')
    await we.delete('we_1')
    expect(server.seen.map((s) => `${s.method} ${s.url.pathname}${s.url.search} ${s.body}`)).toEqual([
      'POST /v1/webhook_endpoint {"url":"https://example.com/hook","enabled_events":["pet.*"],"description":"mine"}',
      'GET /v1/webhook_endpoint/we_1 ',
      'PATCH /v1/webhook_endpoint/we_1 {"status":"disabled"}',
      'GET /v1/webhook_endpoint?limit=5 ',
      'POST /v1/webhook_endpoint/we_1/rotate_secret {"expire_current_in_hours":0}',
      'GET /v1/webhook_endpoint/we_1/delivery?event_id=evt_1&status=failed ',
      'POST /v1/webhook_endpoint/we_1/resend {"event_id":"evt_1"}',
      'POST /v1/webhook_endpoint/we_1/test ',
      'DELETE /v1/webhook_endpoint/we_1 ',
    ])
    // Every POST carries an Idempotency-Key, so the client's retries never act twice.
    for (const s of server.seen.filter((s) => s.method === 'POST'))
      expect(s.headers['idempotency-key']).toBeDefined()
  })
})
