import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8')

/** The documents that send a reader to a test file or folder by its path. */
const DOCUMENTS = [
  'README.md',
  'package.json',
  'bench/README.md',
  'test/README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

/** Every `test/...` path a document names (a file, or a folder when it ends with `/`). */
function namedTestPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/(?<![\w/.-])test\/[\w./-]*[\w/]/g)].map((m) => m[0]))]
}

// The security document points at the tests behind each claim; when the test tree moves those
// pointers must move with it, or the document cites evidence that no longer exists.
describe('test paths named in the documents', () => {
  it('finds several in docs/SECURITY.md (so the check below is not vacuous)', () => {
    expect(namedTestPaths(read('docs/SECURITY.md')).length).toBeGreaterThan(20)
  })

  it.each(DOCUMENTS)('every test path %s names exists', (document) => {
    const missing = namedTestPaths(read(document)).filter((path) => !existsSync(`${ROOT}${path}`))
    expect(missing).toEqual([])
  })
})
