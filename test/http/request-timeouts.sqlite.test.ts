import { connect, type Socket } from 'node:net'
import { beforeAll, expect, it } from 'vitest'
import { basic, useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

// How the HTTP server treats slow clients does not depend on the database: SQLite only.
describeDb('request timeouts', () => {
  let port: number
  let auth: string

  const t = useTestApp({
    HTTP_HEADERS_TIMEOUT_SECONDS: '1',
    HTTP_REQUEST_TIMEOUT_SECONDS: '2',
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
  })
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as { port: number }).port
    auth = basic((await t.newAccount()).apiKey)
  })

  interface Watched {
    socket: Socket
    received: () => string
    /** Milliseconds from connecting until the server closed the connection (Infinity: still open). */
    closedAfter: (limitMs: number) => Promise<number>
  }
  const open = (): Promise<Watched> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1')
      const started = Date.now()
      let received = ''
      let closedAt: number | undefined
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString()
      })
      socket.on('error', () => {})
      const closed = new Promise<void>((done) =>
        socket.on('close', () => {
          closedAt = Date.now()
          done()
        }),
      )
      socket.on('connect', () =>
        resolve({
          socket,
          received: () => received,
          closedAfter: async (limitMs) => {
            await Promise.race([closed, new Promise((r) => setTimeout(r, limitMs))])
            return closedAt === undefined ? Number.POSITIVE_INFINITY : closedAt - started
          },
        }),
      )
    })
  const createPet = (name: string) =>
    fetch(`http://127.0.0.1:${port}/v1/pet`, {
      method: 'POST',
      headers: { authorization: auth },
      body: new URLSearchParams({ name }),
    })

  it('closes connections that dribble their body past HTTP_REQUEST_TIMEOUT_SECONDS, with a 408 problem', async () => {
    const slow = await Promise.all(Array.from({ length: 50 }, open))
    const dribble = setInterval(() => {
      for (const { socket } of slow) if (!socket.destroyed) socket.write('n')
    }, 100)
    try {
      for (const { socket } of slow) {
        socket.write(
          `POST /v1/pet HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\nname=`,
        )
      }
      // Meanwhile other clients are served as usual.
      expect((await createPet('Normal')).status).toBe(201)
      const closedAfter = await Promise.all(slow.map((s) => s.closedAfter(8000)))
      // HTTP_REQUEST_TIMEOUT_SECONDS=2, checked every second: a generous bound above that.
      for (const ms of closedAfter) expect(ms).toBeLessThan(5000)
      const answer = slow[0]!.received()
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(answer).toMatch(/content-type: application\/problem\+json/i)
      expect(answer).toContain('"code":"request_timeout"')
    } finally {
      clearInterval(dribble)
      for (const { socket } of slow) socket.destroy()
    }
  })

  it('closes a connection whose headers are not complete within HTTP_HEADERS_TIMEOUT_SECONDS', async () => {
    const silent = await open()
    const slowHeaders = await open()
    slowHeaders.socket.write('GET /v1/pet HTTP/1.1\r\nHost: x\r\n')
    const dribble = setInterval(() => slowHeaders.socket.write('X-Slow: 1\r\n'), 100)
    try {
      expect(await silent.closedAfter(6000)).toBeLessThan(4000)
      expect(await slowHeaders.closedAfter(6000)).toBeLessThan(4000)
      expect(slowHeaders.received()).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      clearInterval(dribble)
      slowHeaders.socket.destroy()
    }
  })

  it('keeps an idle connection open between requests for HTTP_KEEP_ALIVE_TIMEOUT_SECONDS, then closes it', async () => {
    const idle = await open()
    idle.socket.write(`GET /v1/pet HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n`)
    const closedAfter = await idle.closedAfter(6000)
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(closedAfter).toBeGreaterThanOrEqual(900)
    expect(closedAfter).toBeLessThan(4000)
  })

  it('serves a request whose body arrives in pieces within the bounds', async () => {
    const client = await open()
    client.socket.write(
      `POST /v1/pet HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\nConnection: close\r\n\r\nname=`,
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    client.socket.write('Piece')
    await client.closedAfter(5000)
    expect(client.received()).toMatch(/^HTTP\/1\.1 201 /)
  })
})
