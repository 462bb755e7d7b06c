import { createHash } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../../src/db/schema.ts'
import type { TestDialect } from '../helpers/database.ts'

/** One request as the fuzzer sends it (through app.inject). */
export interface FuzzRequest {
  /** The operation it was derived from (`POST /v2/pet`), for the tally. */
  operation?: string
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

export interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

/** The request and its answer, cut short, for a failure message that can be read. */
export function exchange(request: FuzzRequest, answer?: Answer): string {
  const cut = (text: string, max = 400) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length})` : text
  const payload =
    request.payload === undefined
      ? ''
      : cut(Buffer.isBuffer(request.payload) ? request.payload.toString('latin1') : request.payload)
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, cut(v, 60)]))
  const sent = `${request.method} ${cut(request.url, 200)} ${JSON.stringify(headers)} ${JSON.stringify(payload)}`
  return answer === undefined ? sent : `${sent}\n  → ${answer.statusCode} ${cut(answer.body)}`
}

/**
 * fast-check's report of a failed run, without the whole batch it would print: the seed and
 * path to replay it, and the failing request with its answer (in the error).
 */
export async function reportFailure(details: {
  failed: boolean
  seed: number
  counterexamplePath: string | null
  errorInstance: unknown
}): Promise<void> {
  if (!details.failed) return
  const cause =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
  throw new Error(
    `fuzzing found a defect; replay with FUZZ_SEED=${details.seed} (path ${details.counterexamplePath}):\n${cause}`,
  )
}

function fail(message: string, request: FuzzRequest, answer: Answer): never {
  throw new Error(`${message}\n  ${exchange(request, answer)}`)
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** A stack frame such as `at fn (/path/file.ts:12:3)`: never in an answer. */
const STACK_FRAME = /\n\s+at .+:\d+:\d+\)?/

export async function send(app: FastifyInstance, request: FuzzRequest): Promise<Answer> {
  // As a stream: an event stream (GET /v1/event/stream) never ends, so only its head is read.
  const res: LightMyRequestResponse = await app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: request.headers,
    payloadAsStream: true,
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  })
  const stream = res.stream()
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    stream.destroy()
    return { statusCode: res.statusCode, headers: res.headers, body: '' }
  }
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return { statusCode: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }
}

/** No 5xx, no stack trace, whatever was sent. */
export function assertNoServerError(request: FuzzRequest, answer: Answer): void {
  if (answer.statusCode >= 500) fail(`answered ${answer.statusCode}`, request, answer)
  if (STACK_FRAME.test(answer.body)) fail('the answer shows a stack trace', request, answer)
}

/** Every 4xx of the API is an RFC 9457 problem document with our members. */
export function assertApiAnswer(request: FuzzRequest, answer: Answer): void {
  assertNoServerError(request, answer)
  // A HEAD answer has the GET answer's headers and no body (RFC 9110 §9.3.2).
  if (answer.statusCode < 400 || request.method === 'HEAD') return
  const type = String(answer.headers['content-type'] ?? '')
  if (!type.startsWith('application/problem+json'))
    fail(`a ${answer.statusCode} that is not problem+json`, request, answer)
  const problem = parseObject(answer.body) ?? fail('a problem that is not a JSON object', request, answer)
  for (const member of ['type', 'title', 'detail', 'code', 'request_id']) {
    if (typeof problem[member] !== 'string' || problem[member] === '')
      fail(`the problem lacks \`${member}\``, request, answer)
  }
  if (problem.status !== answer.statusCode)
    fail('the problem status differs from the HTTP status', request, answer)
  if (problem.request_id !== answer.headers['request-id'])
    fail('the problem request_id differs from the Request-Id header', request, answer)
  if (Array.isArray(problem.errors) && problem.errors.length > 20)
    fail('more than 20 errors listed', request, answer)
}

/** RFC 6749 §5.2: the token endpoint's errors are `{"error": …, "error_description"?: …}` JSON. */
export function assertOAuthAnswer(request: FuzzRequest, answer: Answer): void {
  assertNoServerError(request, answer)
  if (answer.statusCode < 400) return
  const type = String(answer.headers['content-type'] ?? '')
  if (!type.startsWith('application/json')) fail(`a ${answer.statusCode} that is not JSON`, request, answer)
  const body = parseObject(answer.body) ?? fail('an error that is not a JSON object', request, answer)
  if (typeof body.error !== 'string' || !/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/.test(body.error))
    fail('no RFC 6749 `error` code', request, answer)
  if (body.error_description !== undefined && typeof body.error_description !== 'string')
    fail('`error_description` is not a string', request, answer)
}

/** Dashboard pages answer HTML (or a redirect), never JSON errors or stack traces. */
export function assertDashboardAnswer(request: FuzzRequest, answer: Answer): void {
  assertNoServerError(request, answer)
  if (answer.statusCode >= 300 && answer.statusCode < 400) {
    if (typeof answer.headers.location !== 'string') fail('a redirect without Location', request, answer)
    return
  }
  const type = String(answer.headers['content-type'] ?? '')
  if (answer.statusCode >= 400 && !type.startsWith('text/html'))
    fail(`a ${answer.statusCode} that is not an HTML page`, request, answer)
}

/**
 * Row counts and a checksum of every table. Left out, each for a reason:
 * - `sign_in_attempts`: the guessing-limit ledger, whose job is to record failed attempts;
 * - `request_log`: the account's request logs, whose job is to record every authenticated
 *   request, refused ones included (test/request-logs/ checks what they keep);
 * - `api_keys.last_used_at`: a usage stamp written at most once a minute by any authenticated
 *   request, failed or not.
 */
const IGNORED_TABLES = new Set([
  'sign_in_attempts',
  'request_log',
  'kysely_migration',
  'kysely_migration_lock',
])
const IGNORED_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] }

export async function snapshotTables(
  db: Kysely<Database>,
  dialect: TestDialect,
): Promise<Record<string, { rows: number; checksum: string }>> {
  const names =
    dialect === 'sqlite'
      ? (
          await sql<{
            name: string
          }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
        ).rows.map((r) => r.name)
      : (
          await sql<{
            name: string
          }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
            db,
          )
        ).rows.map((r) => r.name)
  const out: Record<string, { rows: number; checksum: string }> = {}
  for (const name of names.sort()) {
    if (IGNORED_TABLES.has(name)) continue
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows
    const ignored = IGNORED_COLUMNS[name] ?? []
    const lines = rows
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            .filter((key) => !ignored.includes(key))
            .sort()
            .map((key) => [key, row[key]]),
        ),
      )
      .sort()
    out[name] = { rows: rows.length, checksum: createHash('sha256').update(lines.join('\n')).digest('hex') }
  }
  return out
}

function changedTables(
  before: Awaited<ReturnType<typeof snapshotTables>>,
  after: Awaited<ReturnType<typeof snapshotTables>>,
): string[] {
  return Object.keys({ ...before, ...after }).filter(
    (table) => JSON.stringify(after[table]) !== JSON.stringify(before[table]),
  )
}

/**
 * Sends a batch of requests that must all be refused and checks that no table changed; when one
 * did, sends them again one by one to name the request that changes it.
 */
export async function assertBatchChangesNothing(
  db: Kysely<Database>,
  dialect: TestDialect,
  batch: FuzzRequest[],
  sendOne: (request: FuzzRequest) => Promise<Answer>,
): Promise<void> {
  const before = await snapshotTables(db, dialect)
  for (const request of batch) await sendOne(request)
  if (changedTables(before, await snapshotTables(db, dialect)).length === 0) return
  for (const request of batch) {
    const earlier = await snapshotTables(db, dialect)
    const answer = await sendOne(request)
    const changed = changedTables(earlier, await snapshotTables(db, dialect))
    if (changed.length > 0)
      throw new Error(`a refused request changed ${changed.join(', ')}\n  ${exchange(request, answer)}`)
  }
  throw new Error('the batch changed a table, but none of its requests did so again alone')
}
