/** Plain-text rendering of API objects for people (the `--json` flag prints the API's JSON instead). */

export type Row = Record<string, unknown>

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-'
  if (Array.isArray(value)) {
    return value.length === 0
      ? '-'
      : value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : v)).join(', ')
  }
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value).replace(/\s+/g, ' ')
}

/** A table with a header row, columns padded to their widest cell. */
export function table(rows: Row[], columns: string[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(row[c])))
  const header = columns.map((c) => c.toUpperCase())
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)))
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  return [line(header), ...cells.map(line)].join('\n')
}

/** One object as `field  value` lines. */
export function record(row: Row, fields: string[] = Object.keys(row)): string {
  const width = Math.max(...fields.map((f) => f.length))
  return fields.map((f) => `${f.padEnd(width)}  ${cell(row[f])}`).join('\n')
}
