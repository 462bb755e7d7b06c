import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from './helpers/cli.ts'
import { anchors, linkTargets, readDocument, USER_DOCUMENTS } from './helpers/markdown.ts'

/** The documents whose links a reader follows: the user documentation and the other READMEs. */
const DOCUMENTS = [
  ...USER_DOCUMENTS,
  'clients/typescript/README.md',
  'clients/python/README.md',
  'bench/README.md',
  'test/README.md',
  'CHANGELOG.md',
]

/** The links of a document that lead nowhere: a missing file, or a heading its target lacks. */
function brokenLinks(document: string): string[] {
  const broken: string[] = []
  for (const target of linkTargets(readDocument(document))) {
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue // https:, mailto: … (outside the repository)
    const [path = '', anchor] = target.split('#')
    const file = path === '' ? document : normalize(join(dirname(document), path))
    if (file.startsWith('..') || !existsSync(join(REPO_ROOT, file))) {
      broken.push(`${target} (no ${file})`)
      continue
    }
    if (anchor === undefined || !file.endsWith('.md') || statSync(join(REPO_ROOT, file)).isDirectory())
      continue
    if (!anchors(readDocument(file)).has(anchor)) broken.push(`${target} (no heading #${anchor} in ${file})`)
  }
  return broken
}

// A link that moved with its page, or a heading renamed, leaves a reader at a dead end.
describe('links in the documents', () => {
  it('finds links, and links to headings, to check (so the checks below are not vacuous)', () => {
    expect(
      linkTargets(readDocument('README.md')).filter((l) => l.startsWith('docs/')).length,
    ).toBeGreaterThan(10)
    const all = DOCUMENTS.flatMap((document) => linkTargets(readDocument(document)))
    expect(all.filter((l) => l.includes('#')).length).toBeGreaterThan(10)
  })

  it.each(DOCUMENTS)('every link in %s leads to a file, and to a heading it names', (document) => {
    expect(brokenLinks(document)).toEqual([])
  })
})
