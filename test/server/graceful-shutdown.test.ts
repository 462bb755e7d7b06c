import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey } from '../helpers/app.ts'
import { PET_SERVICE_BIN, readyWorkers, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'
import { call, runLoad } from '../helpers/server-http.ts'

describeDb('graceful shutdown', () => {
  let database: TestDatabase
  let apiKey: string
  beforeAll(async () => {
    database = await createTestDatabase()
    apiKey = (await accountWithKey(database.db, { email: 'shutdown@example.com' })).apiKey
  })
  afterAll(() => database.destroy())
  const auth = () => `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`

  it('finishes a request in flight on SIGTERM, answers one arriving after it with a 503 problem, and exits cleanly', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      SHUTDOWN_DRAIN_SECONDS: '0',
    })
    const body = 'name=InFlight&species=dog'
    const socket = connect(server.port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    let response = ''
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString()
    })
    // `Expect: 100-continue` makes the server say when it has the headers: the request is in flight.
    socket.write(
      `POST /v1/pet HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 8)}`,
    )
    await waitUntil('the server has the headers', async () => response.includes('100 Continue'))
    server.child.kill('SIGTERM')
    await waitUntil('the server is shutting down', async () => server.output().includes('shutting down'))
    // The rest of the body, and a second request pipelined behind it on the same connection.
    socket.write(
      `${body.slice(8)}GET /v1/pet HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth()}\r\n\r\n`,
    )
    await new Promise<void>((resolve) => socket.on('close', () => resolve()))

    const [created, refused] = response.split(/(?=HTTP\/1\.1 (?!100))/).slice(1)
    expect(created).toMatch(/^HTTP\/1\.1 201/)
    expect(refused).toMatch(/^HTTP\/1\.1 503/)
    expect(refused).toMatch(/content-type: application\/problem\+json/i)
    expect(refused).toMatch(/request-id: \S+/i)
    expect(refused).toMatch(/retry-after: \d+/i)
    expect(refused).toContain('"code":"service_unavailable"')
    expect(await server.exited).toBe(0)
    const pets = await database.db.selectFrom('pets').select('name').execute()
    expect(pets.map((p) => p.name)).toContain('InFlight')
  })

  it('drains once when SIGINT and SIGTERM arrive together, as a Ctrl-C under npm start sends them, and exits 0', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      SHUTDOWN_DRAIN_SECONDS: '3',
    })
    // The terminal's SIGINT, then npm's signal a moment later (sent in the same instant, the
    // second is lost while Node replaces its signal handlers, and the bug does not show).
    server.child.kill('SIGINT')
    await waitUntil('the server is shutting down', async () => server.output().includes('shutting down'))
    server.child.kill('SIGTERM')
    // Still serving, not ready: draining, not exiting.
    await waitUntil('/readyz answers 503', async () => (await call(server.port, '/readyz')).status === 503)
    expect((await call(server.port, '/v1/pet', { apiKey })).status).toBe(200)
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    expect(server.output().match(/shutting down: not ready, draining/g)).toHaveLength(1)
  })

  it('answers every request of a keep-alive load across SIGTERM: not ready at once, then drains with no reset', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      RATE_LIMIT_RPS: '0',
      SHUTDOWN_DRAIN_SECONDS: '4',
    })
    const agent = new Agent({ keepAlive: true, maxSockets: 8 })
    let sigtermAt = Number.POSITIVE_INFINITY
    const get = (): Promise<{ status: number; closing: boolean; at: number }> =>
      new Promise((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            path: '/v1/pet?limit=1',
            agent,
            headers: { authorization: auth() },
          },
          (res) => {
            res.resume()
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                closing: res.headers.connection === 'close',
                at: Date.now(),
              }),
            )
          },
        )
        // A reset, a refused connection or a hang up: the failure this test is about.
        req.on('error', () => resolve({ status: -1, closing: false, at: Date.now() }))
        req.end()
      })
    const answers: { status: number; closing: boolean; at: number }[] = []
    const stop = runLoad(8, async () => {
      const answer = await get()
      answers.push(answer)
      return { status: answer.status, ms: 0, headers: new Headers(), body: {} }
    })
    try {
      await waitUntil('the load is under way', async () => answers.length >= 100)
      sigtermAt = Date.now()
      server.child.kill('SIGTERM')
      // A load balancer sees the instance as not ready at once, well within the drain (4 s)...
      const notReadyAfter = await waitUntil(
        '/readyz answers 503',
        async () => (await call(server.port, '/readyz')).status === 503,
      )
      expect(notReadyAfter, server.output().slice(-3000)).toBeLessThan(2500)
      // ...while the clients still sending are served, and told to take their connections elsewhere.
      await waitUntil(
        'clients were moved off their kept-alive connections',
        async () => answers.filter((a) => a.at > sigtermAt && a.closing).length >= 8,
      )
    } finally {
      await stop()
      agent.destroy()
    }
    expect(
      answers.filter((a) => a.status !== 200),
      server.output().slice(-3000),
    ).toEqual([])
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
  })

  /**
   * 32 keep-alive clients, each sending its next request as soon as it has an answer, until
   * refused, across a SIGTERM: what each request came to.
   */
  async function loadAcrossStop(
    server: ServerProcess,
    stop = async () => {
      server.child.kill('SIGTERM')
    },
  ): Promise<Record<string, number>> {
    const agent = new Agent({ keepAlive: true })
    /** A status, `refused` (nothing was sent) or `reset after sending`: the failure at issue. */
    const get = (): Promise<string> =>
      new Promise((resolve) => {
        let sent = false
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            path: '/v1/pet?limit=1',
            agent,
            headers: { authorization: auth() },
          },
          (res) => {
            res.resume()
            res.on('end', () => resolve(String(res.statusCode)))
            res.on('error', () => resolve('reset after sending'))
          },
        )
        req.on('finish', () => {
          sent = true
        })
        req.on('error', (error: NodeJS.ErrnoException) =>
          resolve(!sent && error.code === 'ECONNREFUSED' ? 'refused' : `reset after sending (${error.code})`),
        )
        req.end()
      })
    const outcomes: string[] = []
    const clients = Array.from({ length: 32 }, async () => {
      for (;;) {
        const outcome = await get()
        outcomes.push(outcome)
        if (outcome === 'refused' || outcome.startsWith('reset')) return
      }
    })
    await waitUntil('the load is under way', async () => outcomes.length >= 200)
    await stop()
    await Promise.all(clients)
    agent.destroy()
    const counts: Record<string, number> = {}
    for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1
    return counts
  }

  const expectNoReset = (counts: Record<string, number>, server: ServerProcess) => {
    const log = server
      .output()
      .split('\n')
      .filter((line) => !line.includes('request completed'))
      .join('\n')
      .slice(-2000)
    expect(
      Object.keys(counts).filter((o) => o.startsWith('reset')),
      `${JSON.stringify(counts)}\n${log}`,
    ).toEqual([])
    expect(counts.refused).toBe(32)
    expect(counts['503'], JSON.stringify(counts)).toBeGreaterThan(0)
  }

  it('resets no request a client has sent when the listener closes: each is answered, 200 or 503', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      RATE_LIMIT_RPS: '0',
      SHUTDOWN_DRAIN_SECONDS: '3',
    })
    const counts = await loadAcrossStop(server, async () => {
      server.child.kill('SIGTERM')
      await waitUntil('the server is draining', async () => server.output().includes('shutting down'))
      // The process paused mid-drain (a long garbage collection, a starved CPU): the clients'
      // next requests wait unread, and must not be taken for idle connections.
      server.child.kill('SIGSTOP')
      await new Promise((resolve) => setTimeout(resolve, 1500))
      server.child.kill('SIGCONT')
    })
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    expectNoReset(counts, server)
  })

  it('resets no request either with --workers 2, whose primary holds the port', async () => {
    const server = await startServerProcess(
      PET_SERVICE_BIN,
      { DATABASE_URL: database.url, RATE_LIMIT_RPS: '0', SHUTDOWN_DRAIN_SECONDS: '1' },
      { args: ['--workers', '2'] },
    )
    await waitUntil('both workers are ready', async () => readyWorkers(server).length === 2, 120_000)
    const counts = await loadAcrossStop(server)
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
    expectNoReset(counts, server)
  }, 300_000)

  it('ends a kept-alive connection left unused during the drain, while it still listens', async () => {
    const server = await startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      SHUTDOWN_DRAIN_SECONDS: '4',
    })
    const socket = connect(server.port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    await waitUntil('the first answer', async () => answer.includes('\r\n\r\n'))
    expect(answer).toMatch(/connection: keep-alive/i)
    server.child.kill('SIGTERM')
    await closed
    // Closed by the server while the drain goes on: the next request finds the listener open.
    expect((await call(server.port, '/readyz')).status).toBe(503)
    expect(await server.exited, server.output().slice(-3000)).toBe(0)
  })
})
