import type { Worker } from 'node:cluster'
import type { Server as HttpServer } from 'node:http'
import { createServer, type Server, Socket } from 'node:net'
import { ApiError } from '../errors/api-error.ts'
import { problemDocument, RETRY_AFTER_SECONDS } from '../errors/error-handler.ts'
import { untilQuiet } from './connections.ts'
import { newRequestId } from './request-id.ts'

/**
 * The connections of `serve --workers N` (src/admin-cli/workers.ts): the primary holds the
 * port's one listening socket from start to stop, whatever its workers do, and hands each
 * connection to the next ready worker in turn. A connection that arrives while no worker is
 * ready (all of them being replaced at once, say) waits for the first that is, instead of being
 * refused. node:cluster would close the port with its last listening worker.
 */

/** Primary → worker: a connection (with its socket); the worker's listener is closed. */
const CONNECTION = 'pet-service:connection'
const STOPPED = 'pet-service:connections-stopped'
/** Worker → primary: it takes connections; it takes no more. */
const READY = 'pet-service:ready'
const STOP = 'pet-service:stop-connections'

/** Connections waiting for a ready worker, at most; more are answered 503 at once. */
const MAX_WAITING = 1024

function isMessage(message: unknown, type: string): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type
}

/** The primary's side: the listener, and the workers it hands connections to. */
export class WorkerConnections {
  readonly #listener: Server
  readonly #ready: Worker[] = []
  readonly #waiting: Socket[] = []
  #turn = 0
  #lastOpenedAt = 0
  #stopping = false

  private constructor(listener: Server) {
    this.#listener = listener
    listener.on('connection', (socket: Socket) => {
      this.#lastOpenedAt = Date.now()
      this.#dispatch(socket)
    })
  }

  /** Listens on the port; rejects as `listen` does (the port taken, say). */
  static async listen(port: number, host: string): Promise<WorkerConnections> {
    // Not read here: the worker that is handed the socket reads the request.
    const listener = createServer({ pauseOnConnect: true })
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject)
      listener.listen(port, host, () => {
        listener.removeListener('error', reject)
        resolve()
      })
    })
    return new WorkerConnections(listener)
  }

  /** The port listened on (the one asked for, or the one the system chose for 0). */
  get port(): number {
    const address = this.#listener.address()
    return typeof address === 'object' && address !== null ? address.port : 0
  }

  /** A new worker: it takes connections once it says it is ready. */
  add(worker: Worker): void {
    worker.on('message', (message: unknown) => {
      if (isMessage(message, READY)) {
        this.#ready.push(worker)
        for (const socket of this.#waiting.splice(0)) this.#dispatch(socket)
      } else if (isMessage(message, STOP)) {
        void this.#stop(worker)
      }
    })
    worker.once('exit', () => this.#remove(worker))
  }

  /** The workers taking connections now. */
  ready(): Worker[] {
    return [...this.#ready]
  }

  isReady(worker: Worker): boolean {
    return this.#ready.includes(worker)
  }

  /** The service is stopping: the listener closes as the last ready worker stops taking connections. */
  stop(): void {
    this.#stopping = true
  }

  /** Closes the listener, if still open; the connections waiting for a worker are answered 503. */
  close(): void {
    if (this.#listener.listening) this.#listener.close()
    for (const socket of this.#waiting.splice(0)) answerUnavailable(socket)
  }

  #dispatch(socket: Socket): void {
    const worker = this.#ready[this.#turn++ % Math.max(1, this.#ready.length)]
    if (worker === undefined) {
      if (this.#waiting.length < MAX_WAITING) this.#waiting.push(socket)
      else answerUnavailable(socket)
      return
    }
    worker.send({ type: CONNECTION }, socket, (error) => {
      // Gone meanwhile: another worker takes it.
      if (error !== null) {
        this.#remove(worker)
        this.#dispatch(socket)
      }
    })
  }

  async #stop(worker: Worker): Promise<void> {
    if (this.#stopping && this.#ready.length === 1 && this.#ready[0] === worker) {
      // The last one: it takes (and holds) what comes until the listener closes.
      await untilQuiet(() => this.#lastOpenedAt)
      this.close()
    }
    this.#remove(worker)
    if (worker.isConnected()) worker.send({ type: STOPPED })
  }

  #remove(worker: Worker): void {
    const at = this.#ready.indexOf(worker)
    if (at >= 0) this.#ready.splice(at, 1)
  }
}

/**
 * A connection no worker will take: answered with a 503 problem, its request read and dropped
 * (closing with it unread would reset the connection), then closed.
 */
function answerUnavailable(socket: Socket): void {
  const problem = new ApiError(
    'service_unavailable',
    `The service is busy or stopping; retry in ${RETRY_AFTER_SECONDS} s.`,
  )
  const body = JSON.stringify(problemDocument(problem, newRequestId()))
  socket.on('error', () => {})
  socket.setTimeout(2000, () => socket.destroy())
  socket.resume()
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: ${RETRY_AFTER_SECONDS}\r\nconnection: close\r\n\r\n${body}`,
  )
}

/**
 * The worker's side: serves on `server` the connections the primary hands over, and answers the
 * function that stops them (resolving once the primary has: no connection follows).
 */
export function takeConnectionsFromPrimary(server: HttpServer): () => Promise<void> {
  // Node starts checking HTTP_HEADERS_TIMEOUT_SECONDS and HTTP_REQUEST_TIMEOUT_SECONDS on a
  // server's `listening`; this one never listens itself.
  server.emit('listening')
  process.on('message', (message: unknown, handle: unknown) => {
    if (isMessage(message, CONNECTION) && handle instanceof Socket) server.emit('connection', handle)
  })
  process.send?.({ type: READY })
  return () =>
    new Promise<void>((resolve) => {
      const onMessage = (message: unknown) => {
        if (!isMessage(message, STOPPED)) return
        process.removeListener('message', onMessage)
        resolve()
      }
      process.on('message', onMessage)
      process.send?.({ type: STOP })
    })
}
