import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { type Io, run } from '../../cli/petctl/main.ts'

// `petctl listen` against a local server speaking the stream's contract (Server-Sent Events, as
// README "Events and webhooks" describes them), forwarding to a local receiver that checks each
// delivery with the independent `standardwebhooks` package. The same against the real service
// is in events-live.sqlite.test.ts.

const PETCTL = fileURLToPath(new URL('../../bin/petctl.js', import.meta.url))
const KEY = 'pet_sk_listentest'

const event = (n: number) => ({
  id: `evt_${String(n).padStart(4, '0')}`,
  object: 'event',
  type: n % 2 === 0 ? 'pet.updated' : 'pet.created',
  created_at: new Date(Date.UTC(2026, 10, 24, 0, 0, n)).toISOString(),
  data: { object: { id: 40 + n, object: 'pet', name: `Rëx ${n}` } },
})
// Written as the service writes it; the receiver must get exactly these bytes.
const data = (n: number) => JSON.stringify(event(n))
const sse = (n: number) => `id: ${event(n).id}\nevent: ${event(n).type}\ndata: ${data(n)}\n\n`

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString()
    })
    req.on('end', () => handler(req, res, body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The stream: events 1–2, then the connection drops; the next connection resumes with 3. */
async function streamServer() {
  const connections: IncomingMessage['headers'][] = []
  const url = await serve((req, res) => {
    const n = connections.push(req.headers) - 1
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    if (n === 0) {
      res.write(`: heartbeat\n\n${sse(1)}${sse(2)}`)
      setTimeout(() => res.socket?.destroy(), 50)
    } else res.write(sse(3))
  })
  return { url, connections }
}

/** A webhook receiver that verifies with the reference package, as a user's server would. */
async function receiver(status = 204) {
  const received: { headers: IncomingMessage['headers']; body: string; verified: unknown }[] = []
  let secret = ''
  const url = await serve((req, res, body) => {
    let verified: unknown
    try {
      verified = new Webhook(secret).verify(body, req.headers as Record<string, string>)
    } catch (error) {
      verified = error instanceof Error ? error.message : error
    }
    received.push({ headers: req.headers, body, verified })
    res.writeHead(status).end()
  })
  return {
    url: `${url}/webhooks`,
    received,
    useSecret: (s: string) => {
      secret = s
    },
  }
}

/** Polls until `check` holds (no fixed sleeps). */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** petctl in this process; `stop()` ends the listening as Ctrl-C would. */
function petctl(argv: string[], env: Record<string, string>) {
  const controller = new AbortController()
  const output = { stdout: '', stderr: '' }
  const io: Io = {
    out: (text) => {
      output.stdout += `${text}\n`
    },
    err: (text) => {
      output.stderr += `${text}\n`
    },
    env,
    progress: false,
    signal: controller.signal,
  }
  const done = run(argv, io)
  return { output, done, stop: () => controller.abort() }
}

describe('petctl listen (against the stream contract)', () => {
  it('prints each event, forwards it signed as a real delivery, and resumes after a drop', async () => {
    const stream = await streamServer()
    const hook = await receiver()
    const cli = petctl(['listen', '--events', 'pet.*, user.deleted', '--forward-to', hook.url], {
      PET_SERVICE_URL: stream.url,
      PET_SERVICE_API_KEY: KEY,
    })
    await until(() => /whsec_\S+/.test(cli.output.stderr), 'the secret')
    const secret = cli.output.stderr.match(/whsec_\S+/)![0]
    hook.useSecret(secret)
    await until(
      () => hook.received.length === 3 && cli.output.stdout.split('\n').length > 6,
      'three deliveries',
    )
    cli.stop()
    expect(await cli.done).toBe(0)

    expect(stream.connections[0]!.authorization).toBe(`Basic ${btoa(`${KEY}:`)}`)
    expect(stream.connections[1]!['last-event-id']).toBe('evt_0002')
    expect(cli.output.stderr).toMatch(/Listening for events pet\.\*, user\.deleted\. Ctrl-C to stop\./)
    expect(cli.output.stderr).toMatch(
      /Connection lost \(.+\); reconnecting in \d+\.\d s, resuming after evt_0002\./,
    )
    const lines = cli.output.stdout.trim().split('\n')
    expect(lines).toEqual([
      '2026-11-24T00:00:01.000Z  pet.created   evt_0001  41',
      `  -> POST ${hook.url} 204 No Content (${lines[1]!.match(/\((\d+) ms\)/)![1]} ms)`,
      '2026-11-24T00:00:02.000Z  pet.updated   evt_0002  42',
      expect.stringMatching(/^ {2}-> POST \S+ 204 No Content \(\d+ ms\)$/),
      '2026-11-24T00:00:03.000Z  pet.created   evt_0003  43',
      expect.stringMatching(/^ {2}-> POST \S+ 204 No Content \(\d+ ms\)$/),
    ])
    // Each delivery is the event's JSON byte for byte, verified by the reference package.
    expect(hook.received.map((r) => r.body)).toEqual([data(1), data(2), data(3)])
    expect(hook.received.map((r) => r.verified)).toEqual([event(1), event(2), event(3)])
    expect(hook.received[0]!.headers).toMatchObject({
      'webhook-id': 'evt_0001',
      'content-type': 'application/json',
      'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    })
  })

  it('signs with --secret, prints the events as JSON lines, and reports a receiver that fails', async () => {
    const stream = await streamServer()
    const hook = await receiver(500)
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    hook.useSecret(secret)
    const cli = petctl(['listen', '--json', '--secret', secret, '--forward-to', hook.url], {
      PET_SERVICE_URL: stream.url,
      PET_SERVICE_API_KEY: KEY,
    })
    await until(
      () => hook.received.length === 3 && (cli.output.stderr.match(/ 500 /g) ?? []).length === 3,
      'three',
    )
    cli.stop()
    expect(await cli.done).toBe(0)
    expect(cli.output.stderr).toContain(`Webhook signing secret of this session: ${secret}`)
    expect(
      cli.output.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([event(1), event(2), event(3)])
    expect(hook.received.map((r) => r.verified)).toEqual([event(1), event(2), event(3)])
    expect(cli.output.stderr).toMatch(/-> POST \S+ 500 Internal Server Error \(\d+ ms\)/)
  })

  it('says when the local server cannot be reached, and keeps listening', async () => {
    const stream = await streamServer()
    const closed = await serve(() => {})
    await closers.pop()!() // nothing listens there any more
    const cli = petctl(['listen', '--forward-to', closed], {
      PET_SERVICE_URL: stream.url,
      PET_SERVICE_API_KEY: KEY,
    })
    await until(() => (cli.output.stdout.match(/failed: /g) ?? []).length === 3, 'three failures')
    cli.stop()
    expect(await cli.done).toBe(0)
    expect(cli.output.stdout).toMatch(/-> POST http:\/\/127\.0\.0\.1:\d+\/ failed: connect ECONNREFUSED/)
  })

  it('refuses bad flags before connecting', async () => {
    const env = { PET_SERVICE_URL: 'http://127.0.0.1:9', PET_SERVICE_API_KEY: KEY }
    const badUrl = petctl(['listen', '--forward-to', 'localhost:3000'], env)
    expect(await badUrl.done).toBe(2)
    expect(badUrl.output.stderr).toContain('--forward-to must be an http:// or https:// URL')
    const badSecret = petctl(['listen', '--secret', 'hunter2'], env)
    expect(await badSecret.done).toBe(2)
    expect(badSecret.output.stderr).toContain('--secret must be whsec_ followed by base64')
  })

  it('stops on SIGINT and exits 0 when run as a command', async () => {
    const stream = await streamServer()
    const child = spawn(process.execPath, [PETCTL, 'listen'], {
      env: { ...process.env, PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    await until(() => stdout.includes('evt_0003'), 'the third event', 20_000)
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(stderr).toMatch(
      /^Listening for every event\. Ctrl-C to stop\.\nWebhook signing secret of this session: whsec_/,
    )
  })
})
