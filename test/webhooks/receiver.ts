import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
}

/** How the receiver answers one request: a status, or 'hang' (never answers; the sender times out). */
export type Answer = number | 'hang'

/**
 * A webhook receiver on loopback that records every request. `answer` decides each reply
 * (200 unless told otherwise); `inFlight`/`maxConcurrentPerId` record overlapping requests
 * that carry the same webhook-id (the same event sent twice at once).
 */
export async function startReceiver(answer: (received: Received, n: number) => Answer = () => 200) {
  const received: Received[] = []
  /** The webhook-ids received so far, kept as they come: a waiter asks "has X arrived?" in O(1). */
  const ids = new Set<string>()
  const open = new Map<string, number>()
  const hanging = new Set<ServerResponse>()
  let concurrentDuplicates = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      const id = String(req.headers['webhook-id'])
      const already = open.get(id) ?? 0
      if (already > 0) concurrentDuplicates++
      open.set(id, already + 1)
      received.push(entry)
      ids.add(id)
      const reply = answer(entry, received.length)
      const done = () => open.set(id, (open.get(id) ?? 1) - 1)
      if (reply === 'hang') {
        hanging.add(res)
        res.on('close', done)
        return
      }
      res.on('finish', done)
      res.writeHead(reply, { 'content-type': 'text/plain' }).end(`answer ${reply}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    ids,
    concurrentDuplicates: () => concurrentDuplicates,
    async close() {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.now()) {
  let now = start
  return {
    now: () => now,
    advanceTo(ms: number) {
      now = Math.max(now, ms)
    },
    advance(ms: number) {
      now += ms
    },
    /** Back to the real time (each test starts from it). */
    reset() {
      now = Date.now()
    },
  }
}
