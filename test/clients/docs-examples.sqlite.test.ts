import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWebhookWorker } from '../../src/app.ts'
import { accountWithKey, createTestApp, type LiveServer } from '../helpers/app.ts'
import { freePort, REPO_ROOT } from '../helpers/cli.ts'
import { type CodeBlock, codeBlocks, readDocument, USER_DOCUMENTS } from '../helpers/markdown.ts'
import { oauthClient } from '../helpers/oauth.ts'
import { waitUntil } from '../helpers/poll.ts'
import { type BackgroundJob, exec, type Run, ShellSession } from '../helpers/shell-session.ts'

/*
 * Runs the examples of README.md and docs/*.md as a reader does, in document order, on a fresh
 * service and database per document (SQLite). The words after a block's language say how
 * (docs/development.md, "Examples that run"):
 *
 *   ```sh                 runs; must exit 0, and every curl must get a 2xx (else it prints the problem)
 *   ```sh error=CODE      must fail, and say CODE (a problem's code)
 *   ```sh prints=TEXT     must print TEXT (a background block: by the time the document is done)
 *   ```sh input=TEXT      gets TEXT on standard input (a password typed at a prompt)
 *   ```sh background      keeps running beside the blocks after it (a receiver, `petctl listen`),
 *                         stopped when the document is done; `ready=TEXT` waits for TEXT in its
 *                         output, `stream` for its event stream to be open, before the next block
 *   ```sh server          starts the service: not run; its VAR=value settings are the service's
 *   ```sh no-run          not run (production settings, the test suite, long runs)
 *
 * The shell blocks of a document are one terminal session (test/helpers/shell-session.ts). The
 * TypeScript blocks of a document are one program, and so are its Python blocks; each runs once
 * the shell blocks have, in their environment. README.md starts from nothing, as a newcomer
 * does; every docs page starts where the Quick start ends: PET_SERVICE_URL, PET_SERVICE_API_KEY
 * of me@example.com, and PET_SERVICE_CLIENT_ID and PET_SERVICE_CLIENT_SECRET of an OAuth client of
 * that account with read:pets and write:pets.
 *
 * What differs from a reader's machine, and only that: the service listens on a port of its own
 * (the examples' http://localhost:8080 is rewritten to it), so does a local receiver
 * (localhost:3000), and the admin CLI is given the test's database in DATABASE_URL.
 */

const RUNS = new Set(['sh', 'ts', 'python'])

/** A fresh shell: no node_modules/.bin on the PATH (npm adds the project's when it runs vitest). */
const FRESH_PATH = [
  ...(process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !dir.includes('node_modules')),
  dirname(process.execPath),
].join(delimiter)

/** A reader sees an HTTP error; the test needs curl to fail on one, and to print its problem. */
const CURL_FAILS_ON_ERRORS = 'curl() { command curl --fail-with-body --silent --show-error "$@"; }'

/** How each language's blocks run, as one program. */
const PROGRAMS = [
  { lang: 'ts', extension: 'mts', command: [process.execPath, '--import', 'tsx'] },
  { lang: 'python', extension: 'py', command: ['python3'] },
] as const

function describeBlock(doc: string, block: CodeBlock, code: string, run?: Run): string {
  const outcome =
    run === undefined ? '' : `\nexit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`
  return `${doc}:${block.line} (${block.heading}), a ${block.lang} block:\n${code}${outcome}`
}

/** The settings of a document's `server` blocks: `VAR=value` before `npm start` (PORT aside). */
function serverSettings(blocks: CodeBlock[]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const block of blocks.filter((b) => b.marks.has('server'))) {
    for (const [, name, value] of block.code.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=(\S+)(?=.*npm start)/gm)) {
      if (name !== 'PORT' && name !== 'HOST') env[name!] = value!
    }
  }
  return env
}

/** The service as `npm start` runs it (webhooks worker included), on a fresh database and a port of its own. */
async function startDocsServer(env: Record<string, string>): Promise<LiveServer> {
  // The worker adds a hook, so it starts before the app is ready (as src/server.ts does).
  const t = await createTestApp(env, { ready: false })
  const worker = startWebhookWorker(t.app, t.database)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  return {
    ...t,
    url: `http://127.0.0.1:${port}`,
    async close() {
      await worker.stop()
      await t.close()
    },
  }
}

/** Where the Quick start leaves a reader: the service's address, a key and an OAuth client. */
async function quickStartEnvironment(live: LiveServer): Promise<Record<string, string>> {
  const { accountId, apiKey } = await accountWithKey(live.database.db, { email: 'me@example.com' })
  const { clientId, clientSecret } = await oauthClient(live.database.db, {
    accountId,
    scopes: ['read:pets', 'write:pets'],
  })
  return {
    PET_SERVICE_URL: live.url,
    PET_SERVICE_API_KEY: apiKey,
    PET_SERVICE_CLIENT_ID: clientId,
    PET_SERVICE_CLIENT_SECRET: clientSecret,
  }
}

type Check = (live: LiveServer, runs: Run[]) => Promise<void>

/** Runs a document's examples, in order, and what `check` asks of the whole. */
async function runDocument(doc: string, home: string, check?: Check): Promise<void> {
  const blocks = codeBlocks(readDocument(doc)).filter((b) => RUNS.has(b.lang) && !b.marks.has('no-run'))
  const shell = blocks.filter((b) => b.lang === 'sh' && !b.marks.has('server'))
  // The blocks run in the clone itself: one that installs, starts or tests it would replace or
  // block what the test stands on (an `npm ci` empties node_modules). It must say what it is.
  expect(
    shell.filter((b) => /\bnpm (?!exec\b)\w/.test(b.code)).map((b) => `${doc}:${b.line}`),
    'blocks that run npm in the clone: mark each `server` (it starts the service) or `no-run`',
  ).toEqual([])

  const live = await startDocsServer(serverSettings(blocks))
  // Event streams the service has answered: `stream` waits for one to be open.
  const streams: ServerResponse[] = []
  live.app.server.on('request', (request, response: ServerResponse) => {
    if (request.url?.startsWith('/v1/event/stream')) streams.push(response)
  })
  const receiverPort = await freePort()
  const localize = (code: string) =>
    code
      .replaceAll('http://localhost:8080', live.url)
      .replaceAll('localhost:3000', `localhost:${receiverPort}`)
  const session = new ShellSession(
    {
      PATH: FRESH_PATH,
      HOME: home,
      DATABASE_URL: live.database.url,
      LOG_LEVEL: 'warn',
      ...(doc === 'README.md' ? {} : await quickStartEnvironment(live)),
    },
    CURL_FAILS_ON_ERRORS,
  )
  const background: { block: CodeBlock; job: BackgroundJob }[] = []
  const runs: Run[] = []
  try {
    for (const block of shell) {
      const code = localize(block.code)
      if (block.marks.has('background')) {
        background.push({ block, job: await startBackground(doc, block, session, code, streams) })
        continue
      }
      const run = await session.run(code, block.marks.get('input'))
      runs.push(run)
      const why = describeBlock(doc, block, code, run)
      const error = block.marks.get('error')
      if (error === undefined) expect(run.code, why).toBe(0)
      else {
        expect(run.code, why).not.toBe(0)
        expect(run.stdout + run.stderr, why).toContain(error)
      }
      const prints = block.marks.get('prints')
      if (prints !== undefined) expect(run.stdout + run.stderr, why).toContain(prints)
    }

    for (const { block, job } of background) {
      const why = () => `${describeBlock(doc, block, block.code)}\n--- output\n${job.output()}`
      const prints = block.marks.get('prints')
      if (prints !== undefined) {
        await waitUntil(
          `${doc}:${block.line} prints ${prints}`,
          async () => job.output().includes(prints),
          30_000,
        ).catch((error: Error) => {
          throw new Error(`${error.message}\n${why()}`)
        })
      }
      expect(job.exited(), why()).toBeUndefined()
    }

    // The libraries' examples, each language's blocks one program, in the session's environment.
    const env = { ...(await session.environment()), PYTHONPATH: join(REPO_ROOT, 'clients', 'python') }
    const cache = join(REPO_ROOT, 'node_modules', '.cache', 'docs-examples')
    for (const { lang, extension, command } of PROGRAMS) {
      const mine = blocks.filter((b) => b.lang === lang)
      if (mine.length === 0) continue
      const program = mine.map((b) => localize(b.code)).join('\n\n')
      mkdirSync(cache, { recursive: true })
      const file = join(cache, `${doc.replaceAll('/', '-')}.${extension}`)
      writeFileSync(file, program)
      const run = await exec(command[0], [...command.slice(1), file], env)
      expect(run.code, describeBlock(doc, mine[0]!, program, run)).toBe(0)
      for (const block of mine) {
        const prints = block.marks.get('prints')
        if (prints !== undefined)
          expect(run.stdout, describeBlock(doc, block, program, run)).toContain(prints)
      }
    }
    await check?.(live, runs)
  } finally {
    await session.close()
    await live.close()
  }
}

/** Starts a background block, and waits for what its marks say it must be ready with. */
async function startBackground(
  doc: string,
  block: CodeBlock,
  session: ShellSession,
  code: string,
  streams: ServerResponse[],
): Promise<BackgroundJob> {
  const opened = streams.length
  const job = session.start(code)
  const until = async (what: string, ready: () => boolean) => {
    await waitUntil(
      `${doc}:${block.line} ${what}`,
      async () => {
        if (job.exited() !== undefined) {
          throw new Error(`${describeBlock(doc, block, code)}\nexited ${job.exited()}:\n${job.output()}`)
        }
        return ready()
      },
      60_000,
    )
  }
  const ready = block.marks.get('ready')
  if (ready !== undefined) await until(`prints ${ready}`, () => job.output().includes(ready))
  if (block.marks.has('stream')) {
    await until('has an event stream open', () =>
      streams.slice(opened).some((response) => response.headersSent && !response.writableEnded),
    )
  }
  return job
}

/** What a document's run must have done beyond each block's own marks. */
const CHECKS: Record<string, Check> = {
  // The Quick start, as a newcomer walks it: the admin CLI wrote to the service's database, the
  // pet shows in petctl's table, and the account got its dashboard password.
  'README.md': async (live, runs) => {
    expect(runs.map((r) => r.stderr).join('')).toContain(`database: ${live.database.url}\n`)
    expect(runs.map((r) => r.stdout).join('')).toMatch(/^1\s+Rex\s+dog/m)
    const account = await live.database.db
      .selectFrom('accounts')
      .where('email', '=', 'me@example.com')
      .select('password_hash')
      .executeTakeFirstOrThrow()
    expect(account.password_hash).toMatch(/^scrypt\$/)
  },
}

describe('the documentation’s examples', () => {
  let home: string
  beforeAll(() => {
    // One home for every document: npm's cache (npx) and petctl's config folder, empty at first.
    home = mkdtempSync(join(tmpdir(), 'docs-home-'))
  })
  afterAll(() => rmSync(home, { recursive: true, force: true }))

  const runnable = USER_DOCUMENTS.filter((doc) =>
    codeBlocks(readDocument(doc)).some(
      (b) => RUNS.has(b.lang) && !b.marks.has('no-run') && !b.marks.has('server'),
    ),
  )

  it('finds examples to run in README.md and in several docs pages (so the checks below are not vacuous)', () => {
    expect(runnable).toContain('README.md')
    expect(runnable.length).toBeGreaterThan(4)
  })

  it.each(runnable)(
    '%s: every example runs, in order',
    async (doc) => {
      await runDocument(doc, home, CHECKS[doc])
    },
    600_000,
  )
})
