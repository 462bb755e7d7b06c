/** `petctl logs tail`: the API requests of your account as they are answered (v1, API key). */
import type { PetService, RequestLog, RequestLogListParams } from '../../../clients/typescript/src/index.ts'
import { group, leaf, type Register, type Run, untilInterrupted } from '../command.ts'
import { integer, oneOf } from '../parse.ts'

interface TailFlags {
  status?: string
  method?: string
  path?: string
  credential?: string
  requestId?: string
  interval?: string
  count?: string
}

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const
const OWN_PATH = '/v1/request_log'

export const registerLogs: Register = (program, io) => {
  const logs = group(program, 'logs', 'request logs: the API requests of your account (v1, API key)', [
    'petctl logs tail --status 4xx',
  ])
  leaf(logs, io, 'tail', {
    description:
      'print new request log entries as they come, oldest first, until Ctrl-C (polls GET /v1/request_log)',
    examples: [
      'petctl logs tail --status 4xx --path /v1/pet',
      'petctl logs tail --request-id req_... --count 1 --json',
    ],
    action: tail,
  })
    .option('--status <class>', 'only answers of this class: 2xx, 3xx, 4xx or 5xx')
    .option('--method <method>', 'only this HTTP method')
    .option('--path <prefix>', 'only paths that begin with this, e.g. /v1/pet')
    .option('--credential <id>', 'only requests made with this API key id (key_…) or OAuth client id')
    .option('--request-id <id>', 'only the request with this Request-Id')
    .option('--interval <ms>', 'time between two polls, in milliseconds (default 1000)')
    .option('--count <n>', 'stop after this many entries')
}

async function tail(run: Run<TailFlags>): Promise<void> {
  const { flags } = run
  const filters: RequestLogListParams = {
    ...(flags.status === undefined ? {} : { status_class: oneOf(flags.status, STATUS_CLASSES, '--status') }),
    ...(flags.method === undefined ? {} : { method: flags.method.toUpperCase() }),
    ...(flags.path === undefined ? {} : { path: flags.path }),
    ...(flags.credential === undefined ? {} : { credential_id: flags.credential }),
    ...(flags.requestId === undefined ? {} : { request_id: flags.requestId }),
  }
  const intervalMs = flags.interval === undefined ? 1000 : integer(flags.interval, '--interval', 100)
  const count = flags.count === undefined ? undefined : integer(flags.count, '--count', 1)
  const client = run.client('key')
  let printed = 0
  await untilInterrupted(run.io, async (signal) => {
    // From now: what is already logged is the starting point, not printed.
    let cursor = (await client.requestLogs.list({ ...filters, limit: 1 }, run.options)).data[0]?.id
    run.io.err('Tailing request logs (Ctrl-C to stop)…')
    while (!signal.aborted) {
      for (const entry of await newEntries(client, filters, cursor, run)) {
        cursor = entry.id
        // The tail's own polls are requests too: shown only when asked for by --path.
        if (entry.path.startsWith(OWN_PATH) && !(flags.path ?? '').startsWith(OWN_PATH)) continue
        print(run, entry)
        if (count !== undefined && ++printed >= count) return
      }
      await pause(intervalMs, signal)
    }
  })
}

/** The entries after `cursor` (every one, when there is none yet), oldest first. */
async function newEntries(
  client: PetService,
  filters: RequestLogListParams,
  cursor: string | undefined,
  run: Run<TailFlags>,
): Promise<RequestLog[]> {
  const found: RequestLog[] = []
  let after = cursor
  for (;;) {
    // A page just after the cursor holds the oldest of the newer entries, newest first.
    const page = await client.requestLogs.list(
      { ...filters, limit: 100, ...(after === undefined ? {} : { ending_before: after }) },
      run.options,
    )
    const oldestFirst = [...page.data].reverse()
    if (after === undefined) return oldestFirst
    found.push(...oldestFirst)
    if (!page.has_more || oldestFirst.length === 0) return found
    after = oldestFirst.at(-1)!.id
  }
}

function print(run: Run<TailFlags>, entry: RequestLog): void {
  if (run.json) {
    // One JSON object per line, for jq and scripts.
    run.io.out(JSON.stringify(entry))
    return
  }
  const who = entry.api_key_id ?? entry.oauth_client_id ?? '-'
  const code = entry.error_code === null ? '' : `  ${entry.error_code}`
  run.io.out(
    `${entry.created_at}  ${entry.status}  ${entry.method} ${entry.path}  ${entry.duration_ms} ms  ${entry.request_id}  ${who}${code}`,
  )
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
