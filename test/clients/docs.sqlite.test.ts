import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { basic, startLiveServer } from '../helpers/app.ts'

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8')

/** The example sections of a README: heading → body, from "Create a pet" to the end of that section. */
function sections(markdown: string): Map<string, string> {
  const start = markdown.search(/^#{3,4} Create a pet$/m)
  // The examples end where the next top-level (##) section begins.
  const rest = markdown.slice(start)
  const end = rest.search(/^## /m)
  const out = new Map<string, string>()
  const parts = (end === -1 ? rest : rest.slice(0, end)).split(/^#{3,4} (.+)$/m)
  for (let i = 1; i < parts.length; i += 2) out.set(parts[i]!, parts[i + 1]!.split(/^## /m)[0]!.trim())
  return out
}

const OPERATIONS = [
  'Create a pet',
  'Get a pet',
  'Change some fields of a pet (v1, API key)',
  'Replace a pet (v2 Petstore, OAuth)',
  'Get an OAuth access token',
  'Delete a pet',
  'List pets, one page or all of them',
  'Users (pet owners): create, get, change, delete, list',
  'Events and webhooks: list, stream, endpoints, verify',
  'Errors',
  'Timeouts and retries',
]

// PRODUCT/issue: the README and each library's README show the same example in curl,
// TypeScript, Python and petctl for every operation.
describe('client documentation', () => {
  const readmes = {
    'README.md': sections(read('README.md')),
    'clients/typescript/README.md': sections(read('clients/typescript/README.md')),
    'clients/python/README.md': sections(read('clients/python/README.md')),
  }

  it.each(Object.entries(readmes))(
    '%s shows every operation in curl, TypeScript, Python and petctl',
    (_path, found) => {
      expect([...found.keys()]).toEqual(OPERATIONS)
      for (const [operation, body] of found) {
        const blocks = [...body.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({
          lang,
          code: code!,
        }))
        const has = (lang: string, word: string) =>
          blocks.some((b) => b.lang === lang && b.code.includes(word))
        expect(has('sh', 'curl'), `${operation}: curl`).toBe(true)
        expect(has('ts', ''), `${operation}: TypeScript`).toBe(true)
        expect(has('python', ''), `${operation}: Python`).toBe(true)
        expect(has('sh', 'petctl'), `${operation}: petctl`).toBe(true)
      }
    },
  )

  it('gives the same examples in all three READMEs', () => {
    const [root, ...libraries] = Object.values(readmes)
    for (const library of libraries) expect(library).toEqual(root)
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
  const documents = [
    'README.md',
    'clients/typescript/README.md',
    'clients/python/README.md',
    ...readdirSync(fileURLToPath(new URL('../../docs/', import.meta.url)))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ]

  // Form encoding reads `+` as a space and `&`, `%` as syntax: -d phone=+441234567 stores
  // " 441234567". Such values go with --data-urlencode, which encodes them.
  it.each(documents)('%s sends no raw plus, ampersand or percent sign in a form field', (path) => {
    const raw = curlCommands(read(path)).flatMap((command) =>
      formValues(command)
        .filter((value) => /[+&%]/.test(value))
        .map((value) => `${value} in: ${command.trim()}`),
    )
    expect(raw).toEqual([])
  })

  it("stores the README's example phone number as written (+ included)", async () => {
    const live = await startLiveServer()
    try {
      const { apiKey } = await live.newAccount()
      const command = curlCommands(read('README.md')).find(
        (c) => c.includes('/v1/user ') && c.includes('phone='),
      )
      expect(command).toBeDefined()
      const script = command!.replaceAll('localhost:8080', live.url)
      await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', `${script} -sS -o /dev/null`], {
        env: { PATH: process.env.PATH!, KEY: apiKey },
      })
      const users = await live.app.inject({ url: '/v1/user', headers: { authorization: basic(apiKey) } })
      expect(users.json().data).toMatchObject([{ name: 'Ann Lee', phone: '+441234567' }])
    } finally {
      await live.close()
    }
  })
})
