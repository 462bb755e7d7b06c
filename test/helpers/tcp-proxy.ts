import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net'

/**
 * A TCP proxy of the test's own in front of a shared server (PostgreSQL, Redis), so a test can
 * make that server "go away" without touching it:
 *  - `refuse()`: existing connections are cut and new ones refused (a restart, a crashed host);
 *  - `blackhole()`: connections stay open but nothing goes through either way, and new ones are
 *    accepted but never answered (a partition, a stalled server);
 *  - `restore()`: traffic flows again; what a blackhole held back is delivered, as after a
 *    healed partition.
 */
export class TcpProxy {
  readonly #target: { host: string; port: number }
  readonly #links = new Set<Link>()
  #server: Server | undefined
  #mode: 'pass' | 'refuse' | 'blackhole' = 'pass'
  port = 0

  private constructor(target: { host: string; port: number }) {
    this.#target = target
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target)
    await proxy.#listen(0)
    return proxy
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(this.port)
    return parsed.toString()
  }

  /** Connections that pass through the proxy right now. */
  get connections(): number {
    return this.#links.size
  }

  async refuse(): Promise<void> {
    this.#mode = 'refuse'
    for (const link of this.#links) link.cut()
    this.#links.clear()
    const server = this.#server
    this.#server = undefined
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  blackhole(): void {
    this.#mode = 'blackhole'
    for (const link of this.#links) link.hold()
  }

  async restore(): Promise<void> {
    const previous = this.#mode
    this.#mode = 'pass'
    if (previous === 'refuse') await this.#listen(this.port)
    for (const link of this.#links) link.release()
  }

  async close(): Promise<void> {
    await this.refuse()
  }

  async #listen(port: number): Promise<void> {
    const server = createServer((client) => {
      const link = new Link(client, this.#target, this.#mode === 'blackhole')
      this.#links.add(link)
      client.on('close', () => this.#links.delete(link))
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as { port: number }).port
    this.#server = server
  }
}

/** One client connection and its upstream; while held, bytes wait in the proxy both ways. */
class Link {
  readonly #client: Socket
  readonly #target: { host: string; port: number }
  #upstream: Socket | undefined
  #held: boolean
  readonly #toUpstream: Buffer[] = []
  readonly #toClient: Buffer[] = []

  constructor(client: Socket, target: { host: string; port: number }, held: boolean) {
    this.#client = client
    this.#target = target
    this.#held = held
    client.on('error', () => {})
    client.on('close', () => this.#upstream?.destroy())
    client.on('data', (chunk: Buffer) => {
      if (this.#held || this.#upstream === undefined) this.#toUpstream.push(chunk)
      else this.#upstream.write(chunk)
    })
    // A new connection during a blackhole is accepted but never reaches the server.
    if (!held) this.#connect()
  }

  hold(): void {
    this.#held = true
  }

  release(): void {
    this.#held = false
    if (this.#upstream === undefined) this.#connect()
    else this.#flush()
  }

  cut(): void {
    this.#client.destroy()
    this.#upstream?.destroy()
  }

  #connect(): void {
    const upstream = tcpConnect(this.#target.port, this.#target.host)
    this.#upstream = upstream
    upstream.on('error', () => this.#client.destroy())
    upstream.on('close', () => this.#client.destroy())
    upstream.on('data', (chunk: Buffer) => {
      if (this.#held) this.#toClient.push(chunk)
      else this.#client.write(chunk)
    })
    upstream.on('connect', () => this.#flush())
  }

  #flush(): void {
    for (const chunk of this.#toUpstream.splice(0)) this.#upstream?.write(chunk)
    for (const chunk of this.#toClient.splice(0)) this.#client.write(chunk)
  }
}
