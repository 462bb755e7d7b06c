// The layer check: keeps src/ free of folder-level import cycles and of imports that run up a
// layer, keeps route files short, repositories private to their feature, every table named only
// by the feature that owns it, and HTTP (Fastify) above the domain. Run by `npm run check` (and so
// by CI); docs/ARCHITECTURE.md explains the layers.
//
// Imports are read with TypeScript's own pre-processor (`ts.preProcessFile`), which sees
// `import`, `export … from`, `import type` and dynamic `import()` alike. Relative specifiers make
// the layer map; of packages only Fastify's matter (the HTTP rule). Table names are read from the
// text with comments left out: the query builder's table arguments and raw SQL alike.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** Top to bottom: a file may import from its own layer (without closing a folder cycle) or below. */
export const LAYERS: readonly { name: string; folders: readonly string[] }[] = [
  { name: 'entry', folders: ['server', 'admin-cli'] },
  { name: 'app', folders: ['app'] },
  {
    name: 'presentation',
    folders: ['routes', 'routes/v1', 'routes/v2', 'routes/oauth', 'dashboard', 'health', 'api-docs'],
  },
  {
    name: 'domain',
    folders: [
      'sandboxes',
      'orders',
      'pets',
      'users',
      'accounts',
      'keys',
      'events',
      'webhooks',
      'idempotency',
      'oauth',
      'sign-in',
      'web',
      'access',
      'request-logs',
    ],
  },
  {
    name: 'platform',
    folders: ['db', 'errors', 'config', 'lib', 'http', 'observability', 'schemas'],
  },
]

/**
 * Which feature owns each table: only files of that folder name it, in SQL text or in the query
 * builder; another feature reaches the rows through the owner's module (a statement fragment,
 * such as idempotency/key-claim-statement.ts, is such a module). `db/` is not checked: it holds
 * the table types, the migrations and the per-account id sequences.
 */
export const TABLE_OWNERS: Readonly<Record<string, string>> = {
  accounts: 'accounts',
  account_sequences: 'db',
  api_keys: 'keys',
  dashboard_sessions: 'dashboard',
  events: 'events',
  idempotency_keys: 'idempotency',
  oauth_clients: 'oauth',
  oauth_keys: 'oauth',
  oauth_revocations: 'oauth',
  oauth_store: 'oauth',
  orders: 'orders',
  pet_images: 'pets',
  pets: 'pets',
  sign_in_attempts: 'sign-in',
  users: 'users',
  webhook_attempts: 'webhooks',
  webhook_cursors: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_endpoints: 'webhooks',
  request_log: 'request-logs',
}

/** The tables of src/db/schema.ts's `Database`: each must have an owner in TABLE_OWNERS. */
function schemaTables(root: string): string[] {
  const file = path.join(root, 'db/schema.ts')
  if (!existsSync(file)) return []
  const body = /export interface Database \{([^}]*)\}/.exec(readFileSync(file, 'utf8'))?.[1] ?? ''
  return [...body.matchAll(/^\s*([a-z_]+)\s*:/gm)].map((match) => match[1]!)
}

/**
 * The folders that know nothing of HTTP: every domain folder, and the platform's own that are
 * not HTTP plumbing. The platform's `http/` (request hooks), `errors/` (the problem+json handler)
 * and `observability/` (request metrics and spans) exist to attach to Fastify, and stay free to.
 */
export const HTTP_FREE_FOLDERS: readonly string[] = [
  ...LAYERS.find((layer) => layer.name === 'domain')!.folders,
  'db',
  'config',
  'lib',
  'schemas',
]

/** Longest route file allowed, in lines: past it a file holds more than one resource's routes. */
export const MAX_ROUTE_FILE_LINES = 300

/**
 * Today's violations, each with the change that removes it. The check fails on any violation not
 * listed here and on any entry that no longer happens, so the list can only shrink. It must be
 * empty when the redesign is done.
 */
export const KNOWN_VIOLATIONS: readonly string[] = []

export interface ArchitectureReport {
  violations: string[]
  /** Violations the known list does not mention: these fail the check. */
  unexpected: string[]
  /** Known entries that no longer happen: remove them from the list. */
  stale: string[]
}

interface SourceFile {
  /** Path relative to the source root, with forward slashes: `pets/pets-service.ts`. */
  file: string
  folder: string
  imports: string[]
  /** Package specifiers imported: `fastify`, `kysely`, `node:fs`. */
  packages: string[]
  /** The text without its comments. */
  code: string
  lines: number
}

function listTypeScriptFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry)
    if (statSync(full).isDirectory()) out.push(...listTypeScriptFiles(full))
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(full)
  }
  return out
}

/** `routes/v2/pets.ts` → `routes/v2`; `pets/pet.ts` → `pets`; `app.ts` → `app`. */
export function folderOf(file: string): string {
  const parts = file.split('/')
  if (parts.length === 1) return parts[0]!.replace(/\.ts$/, '')
  if (parts[0] === 'routes' && parts.length > 2) return `routes/${parts[1]}`
  return parts[0]!
}

function layerOf(folder: string): number | undefined {
  const index = LAYERS.findIndex((layer) => layer.folders.includes(folder))
  return index === -1 ? undefined : index
}

function readSources(root: string): SourceFile[] {
  return listTypeScriptFiles(root).map((full) => {
    const text = readFileSync(full, 'utf8')
    const file = path.relative(root, full).split(path.sep).join('/')
    const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName)
    const relative = (spec: string) => spec.startsWith('./') || spec.startsWith('../')
    const imports = specifiers
      .filter(relative)
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
      .filter((target) => !target.startsWith('../'))
    const packages = specifiers.filter((spec) => !relative(spec))
    return {
      file,
      folder: folderOf(file),
      imports,
      packages,
      code: withoutComments(text),
      lines: text.split('\n').length - 1,
    }
  })
}

/** The source text with its comments blanked out (strings and template text kept). */
function withoutComments(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text)
  // What each open `{` belongs to: a block, or a template's `${`, whose `}` resumes the template.
  const braces: ('block' | 'template')[] = []
  let out = ''
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) braces.push('block')
    else if (kind === ts.SyntaxKind.TemplateHead) braces.push('template')
    else if (kind === ts.SyntaxKind.CloseBraceToken && braces.pop() === 'template') {
      kind = scanner.reScanTemplateToken(false)
      if (kind === ts.SyntaxKind.TemplateMiddle) braces.push('template')
    }
    const comment =
      kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia
    out += comment ? ' ' : scanner.getTokenText()
  }
  return out
}

/**
 * The tables a file names: the query builder's table arguments (`selectFrom('events')`,
 * `insertInto('events as e')`, a join's), a table-qualified column (`'events.seq'`), and in raw
 * SQL a table after from, join, into or update.
 */
export function tablesNamed(code: string): string[] {
  const found = new Set<string>()
  const add = (name: string | undefined) => {
    if (name !== undefined && Object.hasOwn(TABLE_OWNERS, name)) found.add(name)
  }
  const builder =
    /\b(?:selectFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin|table)\(\s*['"`]([a-z_]+)/g
  for (const match of code.matchAll(builder)) add(match[1])
  for (const match of code.matchAll(/['"`]([a-z_]+)\.[a-z_*]+['"`]/g)) add(match[1])
  for (const match of code.matchAll(/\b(?:from|join|into|update)\s+"?([a-z_]+)"?/gi)) add(match[1])
  return [...found].sort()
}

/** What ties a file to HTTP: an import of Fastify (or a Fastify plugin), or its request or reply types. */
function httpTies(source: SourceFile): string[] {
  const ties = source.packages.filter((spec) => spec === 'fastify' || spec.startsWith('@fastify/'))
  for (const match of source.code.matchAll(/\b(Fastify(?:Request|Reply|Instance))\b/g)) ties.push(match[1]!)
  return [...new Set(ties)].sort()
}

/** Strongly connected components of the folder graph (Tarjan); each one larger than a folder is a cycle. */
function folderCycles(edges: Map<string, Set<string>>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (node: string): void => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node)
  return components
}

function isRouteFile(file: string): boolean {
  return file.startsWith('routes/') || file.startsWith('dashboard/routes/') || file.endsWith('-routes.ts')
}

/** Every violation under `root` (a `src/` folder), as stable one-line keys, sorted. */
export function findViolations(root: string): string[] {
  const sources = readSources(root)
  const known = new Set(sources.map((source) => source.file))
  const folderOfFile = new Map(sources.map((source) => [source.file, source.folder]))
  const violations: string[] = []
  const edges = new Map<string, Set<string>>()
  for (const source of sources) {
    if (!edges.has(source.folder)) edges.set(source.folder, new Set())
    for (const target of source.imports) {
      if (!known.has(target)) continue
      const targetFolder = folderOfFile.get(target)!
      if (targetFolder === source.folder) continue
      edges.get(source.folder)!.add(targetFolder)
      const from = layerOf(source.folder)
      const to = layerOf(targetFolder)
      if (from === undefined) violations.push(`unmapped: src/${source.folder}/ (add it to LAYERS)`)
      else if (to !== undefined && to < from) violations.push(`upward: src/${source.file} -> src/${target}`)
      if (target.endsWith('-repository.ts'))
        violations.push(`repository: src/${source.file} -> src/${target}`)
    }
    if (isRouteFile(source.file) && source.lines > MAX_ROUTE_FILE_LINES) {
      violations.push(`route-size: src/${source.file} (${source.lines} lines)`)
    }
    if (source.folder !== 'db') {
      for (const table of tablesNamed(source.code)) {
        const owner = TABLE_OWNERS[table]!
        if (owner !== source.folder) {
          violations.push(`table: src/${source.file} names ${table} (owned by src/${owner}/)`)
        }
      }
    }
    if (HTTP_FREE_FOLDERS.includes(source.folder)) {
      for (const tie of httpTies(source)) violations.push(`http: src/${source.file} uses ${tie}`)
    }
  }
  for (const table of schemaTables(root)) {
    if (!Object.hasOwn(TABLE_OWNERS, table))
      violations.push(`unowned: table ${table} (add it to TABLE_OWNERS)`)
  }
  for (const component of folderCycles(edges)) violations.push(`cycle: ${component.join(', ')}`)
  return [...new Set(violations)].sort()
}

/** Compares what happens with what the known list allows; `unexpected` and `stale` both fail. */
export function checkArchitecture(root: string, knownViolations = KNOWN_VIOLATIONS): ArchitectureReport {
  const violations = findViolations(root)
  const allowed = new Set(knownViolations)
  const happening = new Set(violations)
  return {
    violations,
    unexpected: violations.filter((violation) => !allowed.has(violation)),
    stale: knownViolations.filter((entry) => !happening.has(entry)),
  }
}

/** Describes one folder-level cycle by the imports that close it, so the fix is obvious. */
function explainCycle(root: string, component: string[]): string[] {
  const members = new Set(component)
  return readSources(root).flatMap((source) =>
    members.has(source.folder)
      ? source.imports
          .filter((target) => {
            const folder = folderOf(target)
            return folder !== source.folder && members.has(folder)
          })
          .map((target) => `      src/${source.file} -> src/${target}`)
      : [],
  )
}

function main(): void {
  const root = path.resolve(
    process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../src'),
  )
  const report = checkArchitecture(root)
  const describe = (violation: string): string[] => {
    const cycle = /^cycle: (.*)$/.exec(violation)
    return [`  ${violation}`, ...(cycle ? explainCycle(root, cycle[1]!.split(', ')) : [])]
  }
  if (report.unexpected.length > 0) {
    console.error('Architecture check failed: new violations of the layer map (see docs/ARCHITECTURE.md):')
    for (const violation of report.unexpected) console.error(describe(violation).join('\n'))
  }
  if (report.stale.length > 0) {
    console.error(
      'Fixed violations still listed in KNOWN_VIOLATIONS (scripts/check-architecture.ts); remove:',
    )
    for (const entry of report.stale) console.error(`  ${entry}`)
  }
  const allowed = report.violations.length - report.unexpected.length
  if (report.unexpected.length > 0 || report.stale.length > 0) process.exit(1)
  console.log(
    `Architecture check passed (${allowed} known violation${allowed === 1 ? '' : 's'} left to remove).`,
  )
  for (const violation of report.violations) console.log(`  ${violation}`)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
