import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { accountWithKey, basic } from '../helpers/app.ts'
import { PET_SERVICE_BIN, type ServerProcess, startServerProcess } from '../helpers/cli.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'
import { waitUntil } from '../helpers/poll.ts'

interface SpanLine {
  trace_id: string
  span_id: string
  parent_span_id?: string
  name: string
  kind: string
  duration_ms: number
  attributes: Record<string, unknown>
}

/**
 * Seeing traces locally (docs/operations.md): `TRACES_FILE` writes the spans of a real
 * `pet-service serve` to a file, one JSON line each, while its logs stay JSON log lines; a trace
 * is a request, and the background jobs come in only when TRACES_BACKGROUND_RATIO asks.
 */
describeDb('TRACES_FILE', () => {
  let database: TestDatabase
  let dir: string
  beforeAll(async () => {
    database = await createTestDatabase()
    dir = mkdtempSync(join(tmpdir(), 'traces-file-'))
  })
  afterAll(async () => {
    await database?.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  const spansIn = (file: string): SpanLine[] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as SpanLine)
      : []

  async function serve(file: string, env: Record<string, string> = {}): Promise<ServerProcess> {
    // The batch processor writes every 50 ms instead of every 5 s.
    return startServerProcess(PET_SERVICE_BIN, {
      DATABASE_URL: database.url,
      TRACES_FILE: file,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...env,
    })
  }

  const createPet = async (server: ServerProcess, apiKey: string, name: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/pet`, {
      method: 'POST',
      headers: { authorization: basic(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    })
    expect(res.status).toBe(201)
  }

  it('writes each request as a trace, its database spans inside it, and nothing of the background jobs or in the logs', async () => {
    const file = join(dir, 'requests.jsonl')
    const server = await serve(file)
    try {
      const { apiKey } = await accountWithKey(database.db)
      await createPet(server, apiKey, 'first')
      await createPet(server, apiKey, 'second')
      await waitUntil('both requests are in the file', async () =>
        Promise.resolve(spansIn(file).filter((s) => s.name === 'POST /v1/pet').length === 2),
      )
      const spans = spansIn(file)
      const byId = new Map(spans.map((s) => [s.span_id, s]))
      const root = (span: SpanLine): SpanLine => {
        const parent = span.parent_span_id === undefined ? undefined : byId.get(span.parent_span_id)
        return parent === undefined ? span : root(parent)
      }
      for (const span of spans) expect(root(span).kind, `${span.name}'s trace`).toBe('server')
      const request = spans.find((s) => s.name === 'POST /v1/pet')!
      expect(request.attributes['http.response.status_code']).toBe(201)
      expect(spans.some((s) => s.kind === 'client' && root(s) === request)).toBe(true)
      expect(server.output()).not.toMatch(/trace_?id/i)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })

  it('adds the background jobs, each operation a trace of its own, with TRACES_BACKGROUND_RATIO=1', async () => {
    const file = join(dir, 'background.jsonl')
    const server = await serve(file, { TRACES_BACKGROUND_RATIO: '1' })
    try {
      await waitUntil('a background database span is in the file', async () =>
        Promise.resolve(spansIn(file).some((s) => s.kind === 'client' && s.parent_span_id === undefined)),
      )
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })
})
