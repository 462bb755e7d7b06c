import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/** No new connection for this long: the clients still sending are waiting for an answer. */
const QUIET_MS = 200
/** The most a listener's close waits for that quiet, under a load that never pauses. */
const MAX_QUIET_WAIT_MS = 2000

/**
 * Waits until no connection has been accepted for QUIET_MS (MAX_QUIET_WAIT_MS at most), the
 * moment to close a listener: one the kernel has accepted and the process not taken yet is
 * reset with it, with the request its client may have sent.
 */
export async function untilQuiet(lastOpenedAt: () => number): Promise<void> {
  const from = Date.now()
  while (Date.now() - lastOpenedAt() < QUIET_MS && Date.now() - from < MAX_QUIET_WAIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS / 4))
  }
}

interface ConnectionState {
  /** Requests whose answer is not done yet. */
  active: number
  /** When it last had nothing to do (accepted, or its last answer done). */
  idleSince: number
}

/**
 * The open connections of a server, and which have nothing to do: what the stop sequence
 * (shutdown.ts) needs to close them without resetting a request already sent on one.
 */
export class Connections {
  readonly #open = new Map<Socket, ConnectionState>()
  #lastOpenedAt = 0

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.#lastOpenedAt = Date.now()
      this.#open.set(socket, { active: 0, idleSince: this.#lastOpenedAt })
      socket.once('close', () => this.#open.delete(socket))
    })
    server.on('request', (request, response) => {
      const state = this.#open.get(request.socket)
      if (state === undefined) return
      state.active++
      response.once('close', () => {
        state.active--
        if (state.active === 0) state.idleSince = Date.now()
      })
    })
  }

  /** Time of the last connection accepted. */
  get lastOpenedAt(): number {
    return this.#lastOpenedAt
  }

  /** Requests whose answer is not done yet, on every connection. */
  get activeRequests(): number {
    let active = 0
    for (const state of this.#open.values()) active += state.active
    return active
  }

  /**
   * Ends the connections that have had nothing to do for `ms` (no request yet, or none since
   * their last answer); answers how many have nothing to do now. A connection in use has its
   * next request within moments: ending only those idle for a while keeps the chance of ending
   * one as its client sends a request on it small. And only after the event loop has read what
   * has arrived: after a pause of the process (a long garbage collection, a starved CPU) the
   * next request of a busy connection may be waiting, unread, in the kernel.
   */
  endIdleFor(ms: number): number {
    const now = Date.now()
    let idle = 0
    const candidates: [Socket, ConnectionState, number][] = []
    for (const [socket, state] of this.#open) {
      if (state.active > 0 || socket.writableEnded) continue
      idle++
      if (now - state.idleSince >= ms) candidates.push([socket, state, state.idleSince])
    }
    if (candidates.length > 0) {
      // setImmediate runs after the event loop's next poll for I/O, which reads those requests.
      setImmediate(() => {
        for (const [socket, state, idleSince] of candidates) {
          if (state.active === 0 && state.idleSince === idleSince && !socket.writableEnded) socket.end()
        }
      })
    }
    return idle
  }
}
