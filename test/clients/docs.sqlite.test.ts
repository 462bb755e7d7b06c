import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { basic, startLiveServer } from '../helpers/app.ts'
import { REPO_ROOT } from '../helpers/cli.ts'
import { codeBlocks, readDocument, USER_DOCUMENTS } from '../helpers/markdown.ts'

/** Every document with examples: the user documentation and the other READMEs. */
const DOCUMENTS = [
  ...USER_DOCUMENTS,
  'clients/typescript/README.md',
  'clients/python/README.md',
  'bench/README.md',
  'test/README.md',
]

/** The `###` sections of a Markdown text: heading → body (up to the next `##` or `###`). */
function subsections(markdown: string): Map<string, string> {
  const out = new Map<string, string>()
  const parts = markdown.split(/^(#{2,3}) (.+)$/m)
  for (let i = 1; i < parts.length; i += 3) {
    if (parts[i] === '###') out.set(parts[i + 1]!, parts[i + 2]!)
  }
  return out
}

describe('client documentation', () => {
  const api = readDocument('docs/api.md')

  it('shows every operation of docs/api.md in curl, TypeScript, Python and petctl', () => {
    const operations = subsections(api)
    expect([...operations.keys()]).toEqual(
      expect.arrayContaining([
        'Create a pet',
        'Get a pet',
        'Change some fields of a pet',
        'List pets, one page or all of them',
        'Delete a pet',
        'Users (pet owners): create, get, change, delete, list',
        'Orders: create, get, change, delete, list',
        'Events: list, get, watch live',
        'Get an OAuth access token',
        'Replace a pet (v2 Petstore, OAuth)',
        'Handling an error',
        'Timeouts and retries',
      ]),
    )
    for (const [operation, body] of operations) {
      const blocks = codeBlocks(body)
      const has = (lang: string, word: string) => blocks.some((b) => b.lang === lang && b.code.includes(word))
      expect(has('sh', 'curl'), `${operation}: curl`).toBe(true)
      expect(has('ts', ''), `${operation}: TypeScript`).toBe(true)
      expect(has('python', ''), `${operation}: Python`).toBe(true)
      expect(has('sh', 'petctl'), `${operation}: petctl`).toBe(true)
    }
  })

  it.each(['clients/typescript/README.md', 'clients/python/README.md'])(
    '%s links to docs/api.md for the operations instead of copying them',
    (path) => {
      const readme = readDocument(path)
      expect(readme).toContain('](../../docs/api.md)')
      const operations = subsections(api)
      const headings = [...readme.matchAll(/^#{2,4} (.+)$/gm)].map(([, heading]) => heading!)
      expect(headings.filter((heading) => operations.has(heading))).toEqual([])
      const examples = new Set(codeBlocks(api).map((b) => b.code.trim()))
      expect(codeBlocks(readme).filter((b) => examples.has(b.code.trim()))).toEqual([])
    },
  )
})

describe('the documents', () => {
  it('keep README.md short, with the two commands a newcomer needs first', () => {
    const readme = readDocument('README.md')
    expect(readme.split('\n').length).toBeLessThanOrEqual(450)
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })

  it('give no example twice: no code block appears in two places', () => {
    const seen = new Map<string, string>()
    const repeated: string[] = []
    for (const path of DOCUMENTS) {
      for (const block of codeBlocks(readDocument(path))) {
        const code = block.code.trim()
        const first = seen.get(code)
        if (first !== undefined) repeated.push(`${path}:${block.line} repeats ${first}`)
        else seen.set(code, `${path}:${block.line}`)
      }
    }
    expect(repeated).toEqual([])
  })
})

/** Every curl command in a Markdown text, its `\` continuation lines joined. */
function curlCommands(markdown: string): string[] {
  return markdown
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => /(^|[\s($])curl /.test(line))
}

/** The values a curl command sends with -d/--data as form fields, unquoted. */
function formValues(command: string): string[] {
  return [...command.matchAll(/(?:^|\s)(?:-d|--data|--data-raw)\s+('[^']*'|"[^"]*"|\S+)/g)]
    .map(([, arg]) => arg!.replace(/^(['"])(.*)\1$/, '$2'))
    .filter((value) => !value.startsWith('{') && !value.startsWith('@'))
}

describe('curl examples in the documentation', () => {
  // Form encoding reads `+` as a space and `&`, `%` as syntax: -d phone=+441234567 stores
  // " 441234567". Such values go with --data-urlencode, which encodes them.
  it.each(DOCUMENTS)('%s sends no raw plus, ampersand or percent sign in a form field', (path) => {
    const raw = curlCommands(readDocument(path)).flatMap((command) =>
      formValues(command)
        .filter((value) => /[+&%]/.test(value))
        .map((value) => `${value} in: ${command.trim()}`),
    )
    expect(raw).toEqual([])
  })

  it("stores docs/api.md's example phone number as written (+ included)", async () => {
    const live = await startLiveServer()
    try {
      const { apiKey } = await live.newAccount()
      const line = curlCommands(readDocument('docs/api.md')).find(
        (c) => c.includes('/v1/user"') && c.includes('phone=+'),
      )
      expect(line).toBeDefined()
      // The curl command alone, without what the example does with its answer.
      const command = /curl [^|)]*/.exec(line!)![0]
      await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', `${command} -sS -o /dev/null`], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH!, PET_SERVICE_URL: live.url, PET_SERVICE_API_KEY: apiKey },
      })
      const users = await live.app.inject({ url: '/v1/user', headers: { authorization: basic(apiKey) } })
      expect(users.json().data).toMatchObject([{ name: 'Ann Lee', phone: '+441234567' }])
    } finally {
      await live.close()
    }
  })
})
