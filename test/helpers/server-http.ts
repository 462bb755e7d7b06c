import { connect, type Socket } from 'node:net'
import { expect } from 'vitest'
import type { ServerProcess } from './cli.ts'

export interface Answer {
  status: number
  ms: number
  headers: Headers
  body: Record<string, unknown>
}

const NETWORK_ERROR = 0

/** One HTTP request to a server process; a network error is status 0, never a throw. */
export async function call(
  port: number,
  path: string,
  init: { method?: string; apiKey?: string; form?: Record<string, string> } = {},
): Promise<Answer> {
  const started = Date.now()
  const headers: Record<string, string> = {}
  if (init.apiKey !== undefined) headers.authorization = `Basic ${btoa(`${init.apiKey}:`)}`
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
      headers,
      ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form) }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(text) as Record<string, unknown>
    } catch {
      body = { text }
    }
    return { status: response.status, ms: Date.now() - started, headers: response.headers, body }
  } catch (error) {
    return {
      status: NETWORK_ERROR,
      ms: Date.now() - started,
      headers: new Headers(),
      body: { error: String(error) },
    }
  }
}

/** The answer of a service whose database is away: a problem document that says when to retry. */
export function expectUnavailable(answer: Answer, code = 'database_unavailable'): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503)
  expect(answer.headers.get('content-type')).toContain('application/problem+json')
  expect(answer.body.code).toBe(code)
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
  expect(answer.headers.get('request-id')).toMatch(/\S/)
}

/** Fails if the server process has exited. */
export function expectAlive(server: ServerProcess): void {
  expect(server.child.exitCode, server.output().slice(-3000)).toBeNull()
  expect(server.child.signalCode).toBeNull()
}

/** Requests sent by `workers` concurrent loops until stopped; every answer is kept. */
export function runLoad(workers: number, request: (i: number) => Promise<Answer>): () => Promise<Answer[]> {
  let running = true
  const answers: Answer[] = []
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; running; i++) answers.push(await request(worker * 1_000_000 + i))
  })
  return async () => {
    running = false
    await Promise.all(loops)
    return answers
  }
}

export interface HeldRequest {
  socket: Socket
  /** The status line's code, once the first bytes of the answer arrived. */
  status: Promise<number>
  /** Those first bytes, as text (the whole answer, when it is small). */
  firstBytes: Promise<string>
  /** Reads the rest; answers the bytes received in all once the server has closed the connection. */
  readToEnd(): Promise<number>
}

/**
 * A GET whose client reads the first bytes of the answer and then nothing more: the
 * connection stays open with the rest of the answer unread, as a slow or hostile client leaves it.
 */
export function holdUnread(port: number, path: string, headers: Record<string, string> = {}): HeldRequest {
  const socket = connect(port, '127.0.0.1')
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
  socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('')}\r\n`)
  socket.on('error', () => {})
  let received = 0
  const firstBytes = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause()
      received += chunk.length
      resolve(chunk.toString('latin1'))
    })
  })
  const status = firstBytes.then((text) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  const readToEnd = async () => {
    await status
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
    })
    socket.resume()
    await closed
    return received
  }
  return { socket, status, firstBytes, readToEnd }
}
