import { readdirSync, readFileSync } from 'node:fs'
import { REPO_ROOT } from './cli.ts'

/** The user documentation: README.md, then docs/*.md in name order. */
export const USER_DOCUMENTS = [
  'README.md',
  ...readdirSync(`${REPO_ROOT}docs`)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

export function readDocument(path: string): string {
  return readFileSync(`${REPO_ROOT}${path}`, 'utf8')
}

/** A fenced code block: its language, the marks after it (```sh error=pet_not_found), its text. */
export interface CodeBlock {
  lang: string
  marks: Map<string, string>
  code: string
  /** 1-based line of the opening fence, for messages. */
  line: number
  /** The nearest heading above the block. */
  heading: string
}

/**
 * Every fenced code block of a Markdown text, in order. The info string's first word is the
 * language; the words after it are marks, `name` or `name=value` (`name="a value"`, `name='a "value"'`), which
 * renderers ignore and the documentation tests read.
 */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  const lines = markdown.split('\n')
  let heading = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const title = /^#{1,6} (.+)$/.exec(line)
    if (title) heading = title[1]!
    const open = /^```(\S*)(.*)$/.exec(line)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l === '```')
    if (end === -1) throw new Error(`line ${i + 1}: a code block that is never closed`)
    const marks = new Map<string, string>()
    for (const [, name, double, single, bare] of open[2]!.matchAll(
      /([\w-]+)(?:="([^"]*)"|='([^']*)'|=(\S+))?/g,
    )) {
      marks.set(name!, double ?? single ?? bare ?? '')
    }
    blocks.push({ lang: open[1]!, marks, code: lines.slice(i + 1, end).join('\n'), line: i + 1, heading })
    i = end
  }
  return blocks
}

/** The text of a Markdown document outside its code blocks (links and prose only). */
export function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
}

/** Every link and image target in a Markdown text, outside code blocks and code spans. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(([, target]) => target!)
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors a Markdown document's headings give (a repeated heading gets -1, -2, … as on GitHub). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(heading!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}
