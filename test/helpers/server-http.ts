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
