import type { RoundResult } from './load.ts'

export type Group = 'reference' | 'sqlite' | 'sqlite-1m' | 'postgres' | 'json-server'

export interface CaseRecord {
  id: string
  label: string
  group: Group
  request: string
  /** Pets in the table when the case started. */
  petsBefore?: number
  /** Why the case did not run (endpoint not there yet, no PostgreSQL…). */
  skipped?: string
  /** Why the case broke off. */
  failed?: string
  rps?: number
  p50Ms?: number
  p99Ms?: number
  errors?: number
  statusCodes?: Record<string, number>
  peakRssMb?: number
  /** Median over the rounds of req/s ÷ the bare server's req/s measured just before. */
  ratio?: number
  /** The bare server's req/s in those rounds (median). */
  bareRps?: number
  /** Server CPU time per answered request, µs (median over rounds). */
  cpuUsPerRequest?: number
  /** PostgreSQL's CPU time per answered request, µs (median over rounds), for its group's cases. */
  databaseCpuUsPerRequest?: number
  /** The bare server's CPU per request ÷ this one's: the ratio were each to have a core. */
  cpuRatio?: number
  /** The issue's target for the ratio, when it sets one. */
  targetRatio?: number
  /** A create case's ratio ÷ the ORM peer's on the same database (bench/orm-peer-server.ts). */
  ormPeerRatio?: number
  rounds?: RoundResult[]
  /**
   * The same load without what this case adds, its rounds interleaved with this case's on the
   * same server: its req/s and CPU per request (medians), and the median of the per-pair
   * ratios of req/s (this ÷ that).
   */
  versus?: { label: string; rps: number; ratio: number; cpuUsPerRequest: number }
  /**
   * The webhook case: deliveries per second while its creates saturated the service (median of
   * its rounds) against the events written per second, then what was left delivered with no
   * load, and how long that took.
   */
  webhooks?: { deliveredPerSecond: number; eventsPerSecond: number; drained: number; drainSeconds: number }
}

export interface Check {
  name: string
  target: string
  value: string
  met: boolean | null
}

export interface Report {
  date: string
  mode: 'quick' | 'full'
  commit: string
  machine: { cpus: number; cpuModel: string; node: string; os: string; memoryGb: number }
  timing: { warmupSeconds: number; seconds: number; bareSeconds: number; rounds: number; connections: number }
  bare: { rps: number; samples: number[]; cpuUsPerRequest: number }
  /** 1, 5 and 15 minute load averages: how busy the shared machine was. */
  loadAverage: { start: number[]; end: number[] }
  cases: CaseRecord[]
  /**
   * CPU µs per operation of the same SQL run straight through better-sqlite3 in one process
   * (no HTTP, no framework), at 0 and at 1M pets: the floor under each case.
   */
  sqliteAlone: { at0?: Record<string, number>; at1m?: Record<string, number> }
  checks: Check[]
  totalSeconds: number
}

/** The peers (bench/peer-server.ts, bench/orm-peer-server.ts): not the service's own cases. */
export const isPeer = (c: Pick<CaseRecord, 'id'>): boolean => c.id.endsWith('peer-create')

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined
    ? '–'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The results as a Markdown table plus the target checks (printed, and pasted into bench/README.md). */
export function markdownReport(report: Report): string {
  const lines = [
    '| case | request | pets before | req/s | × bare | target | × ORM peer | p50 ms | p99 ms | errors | peak RSS MB | CPU µs/req | CPU × bare | PostgreSQL CPU µs/req |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const c of report.cases) {
    if (c.skipped !== undefined || c.failed !== undefined) {
      lines.push(
        `| ${c.label} | \`${c.request}\` | | ${c.failed ? `**failed**: ${c.failed}` : `skipped: ${c.skipped}`} | | | | | | | | | | |`,
      )
      continue
    }
    lines.push(
      `| ${c.label} | \`${c.request}\` | ${fmt(c.petsBefore)} | ${fmt(c.rps)} | ${fmt(c.ratio, 3)} | ${
        c.targetRatio === undefined ? '' : `≥ ${c.targetRatio}`
      } | ${c.ormPeerRatio === undefined ? '' : fmt(c.ormPeerRatio, 2)} | ${fmt(c.p50Ms, 2)} | ${fmt(c.p99Ms, 2)} | ${fmt(c.errors)} | ${fmt(c.peakRssMb)} | ${fmt(c.cpuUsPerRequest)} | ${fmt(c.cpuRatio, 3)} | ${fmt(c.databaseCpuUsPerRequest)} |`,
    )
  }
  const { at0, at1m } = report.sqliteAlone
  if (at0 !== undefined || at1m !== undefined) {
    const bareCpu = report.bare.cpuUsPerRequest
    lines.push(
      '',
      `SQLite alone (the service's statements through better-sqlite3, one process, no HTTP; creates and updates ${fmt(at0?.perCommit ?? at1m?.perCommit, 1)} to a shared commit at 0 pets and ${fmt(at1m?.perCommit, 1)} at 1M, as the service's create case committed them, each in its savepoint): CPU µs per operation, and the ratio a case could reach if everything but SQLite were free (bare server: ${fmt(bareCpu)} µs per request).`,
      '',
      '| operation | µs at 0 | ceiling × bare | µs at 1M | ceiling × bare |',
      '|---|--:|--:|--:|--:|',
    )
    for (const op of ['create', 'create, one per commit', 'read', 'update', 'list']) {
      const a = at0?.[op]
      const b = at1m?.[op]
      const ceiling = (us: number | undefined) => (us === undefined || us === 0 ? '–' : fmt(bareCpu / us, 2))
      lines.push(`| ${op} | ${fmt(a, 1)} | ${ceiling(a)} | ${fmt(b, 1)} | ${ceiling(b)} |`)
    }
  }
  lines.push('', '| target | wanted | measured | met |', '|---|---|---|---|')
  for (const check of report.checks) {
    lines.push(
      `| ${check.name} | ${check.target} | ${check.value} | ${check.met === null ? 'n/a' : check.met ? 'yes' : '**no**'} |`,
    )
  }
  return lines.join('\n')
}

/** The peers, whichever database they write to. */
const PEER_COLOUR = '#059669'

const escapeXml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * A horizontal bar chart of each case's ratio to the bare server, with the target as a tick.
 * Ratios span three orders of magnitude (json-server at 50k pets is ~0.001×), so the axis is
 * logarithmic from 0.001× to 1×.
 */
export function svgChart(report: Report): string {
  const rows = report.cases.filter((c) => c.ratio !== undefined)
  const width = 1000
  const left = 270
  const right = 330
  const top = 56
  const rowHeight = 26
  const plotWidth = width - left - right
  const height = top + rows.length * rowHeight + 40
  const minLog = -3
  const x = (ratio: number): number =>
    left + ((Math.max(minLog, Math.log10(Math.max(ratio, 1e-6))) - minLog) / -minLog) * plotWidth
  const colours: Record<Group, string> = {
    reference: '#6b7280',
    sqlite: '#2563eb',
    'sqlite-1m': '#7c3aed',
    postgres: '#0891b2',
    'json-server': '#d97706',
  }
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="15" font-weight="600">Throughput as a ratio to a bare node:http server (${fmt(report.bare.rps)} req/s)</text>`,
    `<text x="${left}" y="38" fill="#4b5563">${escapeXml(`${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}, 50 connections, ${report.mode} run ${report.date.slice(0, 16).replace('T', ' ')} UTC · black tick: target · green: peers`)}</text>`,
  ]
  for (const tick of [0.001, 0.01, 0.1, 0.25, 0.5, 1]) {
    const tx = x(tick)
    parts.push(
      `<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${top + rows.length * rowHeight}" stroke="#e5e7eb"/>`,
      `<text x="${tx}" y="${top + rows.length * rowHeight + 16}" text-anchor="middle" fill="#6b7280">${tick}×</text>`,
    )
  }
  rows.forEach((c, i) => {
    const y = top + i * rowHeight
    const ratio = c.ratio ?? 0
    const missed = c.targetRatio !== undefined && ratio < c.targetRatio
    parts.push(
      `<text x="${left - 8}" y="${y + 16}" text-anchor="end">${escapeXml(c.label)}</text>`,
      `<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(ratio) - left)}" height="${rowHeight - 8}" fill="${isPeer(c) ? PEER_COLOUR : colours[c.group]}" opacity="${missed ? 0.55 : 0.9}"/>`,
      `<text x="${left + plotWidth + 14}" y="${y + 16}" fill="${missed ? '#b91c1c' : '#111827'}">${fmt(ratio, 3)}× · ${fmt(c.rps)} req/s · p99 ${fmt(c.p99Ms, 1)} ms${missed ? ' (below target)' : ''}</text>`,
    )
    if (c.targetRatio !== undefined) {
      const tx = x(c.targetRatio)
      parts.push(
        `<line x1="${tx}" y1="${y + 1}" x2="${tx}" y2="${y + rowHeight - 1}" stroke="#111827" stroke-width="2"/>`,
      )
    }
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
