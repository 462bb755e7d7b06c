import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

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
