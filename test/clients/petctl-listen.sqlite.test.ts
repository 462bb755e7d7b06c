import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { type Io, run } from '../../cli/petctl/main.ts'
import { waitUntil } from '../helpers/poll.ts'

// `petctl listen` against a local server speaking the stream's contract (Server-Sent Events, as
// docs/api.md, "Events", describes them), forwarding to a local receiver that checks each
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

/** What `GET /v1/account` answers for each test key: two keys of one account, another, a sandbox. */
const ACCOUNTS: Record<string, { id: string; mode: 'live' | 'sandbox'; live_account_id: string | null }> = {
  [KEY]: { id: 'acct_listen', mode: 'live', live_account_id: null },
  pet_sk_listentest2: { id: 'acct_listen', mode: 'live', live_account_id: null },
  pet_sk_otheraccount: { id: 'acct_other', mode: 'live', live_account_id: null },
  pet_sk_test_listentest: { id: 'acct_listensandbox', mode: 'sandbox', live_account_id: 'acct_listen' },
}

function answerAccount(req: IncomingMessage, res: ServerResponse): void {
  const basic = (req.headers.authorization ?? '').replace(/^Basic /, '')
  const key = Buffer.from(basic, 'base64').toString().replace(/:$/, '')
  const account = ACCOUNTS[key]
  if (account === undefined) {
    res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"code":"api_key_invalid"}')
    return
  }
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ ...account, object: 'account', created_at: '2026-11-26T00:00:00.000Z' }))
}

/**
 * The stream: events 1–2, then the connection drops; the next connection resumes with 3. It
 * answers `GET /v1/account` too, which listen asks first.
 */
async function streamServer() {
  const connections: IncomingMessage['headers'][] = []
  const url = await serve((req, res) => {
    if (req.url === '/v1/account') return answerAccount(req, res)
    connections.push(req.headers)
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    // A session that starts afresh gets 1–2 and the drop; one that resumes, the rest.
    if (req.headers['last-event-id'] === undefined) {
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

/** A config home of the test's own (removed after it), so no test writes to the real ~/.config. */
function configHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petctl-listen-'))
  closers.push(async () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Polls until `check` holds (no fixed sleeps). */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  await waitUntil(what, check, timeoutMs, 10)
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
    expect(cli.output.stderr).toMatch(
      /Listening for events pet\.\*, user\.deleted of the live account\. Ctrl-C to stop\./,
    )
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

  /** One `petctl listen` session: its secret line, once printed; then stopped as Ctrl-C would. */
  async function session(argv: string[], env: Record<string, string>) {
    const cli = petctl(['listen', ...argv], env)
    await until(() => cli.output.stderr.includes('Webhook signing secret'), 'the secret line')
    cli.stop()
    expect(await cli.done, cli.output.stderr).toBe(0)
    const line = cli.output.stderr.split('\n').find((l) => l.startsWith('Webhook signing secret'))!
    return { line, secret: line.match(/whsec_\S+/)![0] }
  }

  it('keeps one signing secret per account across sessions, in the config file, saying whether it is new', async () => {
    const stream = await streamServer()
    const home = configHome()
    const file = join(home, 'petctl', 'config.json')
    const env = { PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY, XDG_CONFIG_HOME: home }

    const first = await session([], env)
    expect(first.line).toBe(
      `Webhook signing secret of this session: ${first.secret} (new, kept in ${file} for the next sessions)`,
    )
    const again = await session([], env)
    expect(again.secret).toBe(first.secret)
    expect(again.line).toContain(`(the same as last time, kept in ${file}; --new-secret replaces it)`)

    // Another key of the same account signs with the same secret.
    const sameAccount = await session([], { ...env, PET_SERVICE_API_KEY: 'pet_sk_listentest2' })
    expect(sameAccount.secret).toBe(first.secret)
    // Another account has a secret of its own, and so has the account's sandbox; the first one's stays.
    const other = await session([], { ...env, PET_SERVICE_API_KEY: 'pet_sk_otheraccount' })
    expect(other.secret).not.toBe(first.secret)
    expect(other.line).toContain('(new, kept in')
    const sandbox = await session([], { ...env, PET_SERVICE_API_KEY: 'pet_sk_test_listentest' })
    expect(sandbox.secret).not.toBe(first.secret)
    expect(sandbox.secret).not.toBe(other.secret)
    expect((await session([], env)).secret).toBe(first.secret)

    // The file: readable by its owner only, the secrets in it, the keys not.
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const text = readFileSync(file, 'utf8')
    expect(text).toContain(first.secret)
    expect(text).toContain(other.secret)
    expect(text).not.toContain(KEY)
    expect(text).not.toContain('pet_sk_otheraccount')
    expect(Object.keys(JSON.parse(text).listen_secrets).sort()).toEqual([
      'account:acct_listen',
      'account:acct_listensandbox',
      'account:acct_other',
    ])

    const renewed = await session(['--new-secret'], env)
    expect(renewed.secret).not.toBe(first.secret)
    expect(renewed.line).toContain(`(new, replacing the one kept in ${file} for the next sessions)`)
    expect((await session([], env)).secret).toBe(renewed.secret)
  })

  it('forwards with the kept secret, and keeps the settings already in the config file', async () => {
    const stream = await streamServer()
    const hook = await receiver()
    const home = configHome()
    const file = join(home, 'config.json')
    writeFileSync(file, JSON.stringify({ PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY }))
    const { secret } = await session([], { PET_SERVICE_CONFIG: file })
    hook.useSecret(secret)
    const cli = petctl(['listen', '--forward-to', hook.url], { PET_SERVICE_CONFIG: file })
    await until(() => hook.received.length === 3, 'three deliveries')
    cli.stop()
    expect(await cli.done).toBe(0)
    expect(hook.received.map((r) => r.verified)).toEqual([event(1), event(2), event(3)])
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      PET_SERVICE_URL: stream.url,
      PET_SERVICE_API_KEY: KEY,
      listen_secrets: expect.any(Object),
    })
  })

  it('keeps a secret given with --secret for the next sessions, and refuses it with --new-secret', async () => {
    const stream = await streamServer()
    const env = { PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY, XDG_CONFIG_HOME: configHome() }
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    expect((await session(['--secret', secret], env)).line).toMatch(/\(from --secret, kept in \S+ for/)
    const next = await session([], env)
    expect(next.secret).toBe(secret)
    expect(next.line).toContain('(the same as last time')
    const both = petctl(['listen', '--secret', secret, '--new-secret'], env)
    expect(await both.done).toBe(2)
    expect(both.output.stderr).toContain('Give --secret or --new-secret, not both.')
  })

  it('signs with a secret for this session only, and says why, when it cannot keep one', async () => {
    const stream = await streamServer()
    const env = { PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY }
    const nowhere = await session([], env) // no HOME, no XDG_CONFIG_HOME, no PET_SERVICE_CONFIG
    expect(nowhere.line).toContain(
      '(new, for this session only: no config file to keep it in; set PET_SERVICE_CONFIG or HOME)',
    )
    expect((await session([], env)).secret).not.toBe(nowhere.secret)
    const notADirectory = join(configHome(), 'a-file')
    writeFileSync(notADirectory, '')
    const unwritable = await session([], { ...env, XDG_CONFIG_HOME: notADirectory })
    expect(unwritable.line).toMatch(/\(new, for this session only: cannot write \S+config\.json: ENOTDIR/)
  })

  it('stops on SIGINT and exits 0 when run as a command', async () => {
    const stream = await streamServer()
    const home = configHome()
    const child = spawn(process.execPath, [PETCTL, 'listen'], {
      env: { ...process.env, XDG_CONFIG_HOME: home, PET_SERVICE_URL: stream.url, PET_SERVICE_API_KEY: KEY },
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
      /^Listening for every event of the live account\. Ctrl-C to stop\.\nWebhook signing secret of this session: whsec_/,
    )
  })

  it('names the sandbox in its banner, and keeps the secret an earlier petctl kept for the key', async () => {
    const stream = await streamServer()
    const home = configHome()
    const file = join(home, 'config.json')
    // An earlier petctl named the entry by the key's hash.
    const hash = createHash('sha256').update('pet_sk_test_listentest').digest('hex').slice(0, 32)
    const earlier = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    writeFileSync(file, JSON.stringify({ listen_secrets: { [`sha256:${hash}`]: { secret: earlier } } }))
    const env = {
      PET_SERVICE_URL: stream.url,
      PET_SERVICE_API_KEY: 'pet_sk_test_listentest',
      PET_SERVICE_CONFIG: file,
    }
    const cli = petctl(['listen'], env)
    await until(() => cli.output.stderr.includes('Webhook signing secret'), 'the secret line')
    cli.stop()
    expect(await cli.done).toBe(0)
    expect(cli.output.stderr).toContain('Listening for every event of the SANDBOX (test data).')
    expect(cli.output.stderr).toContain(
      `Webhook signing secret of this session: ${earlier} (the same as last time`,
    )
  })
})
