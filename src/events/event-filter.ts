import { EVENT_TYPES, EVENT_WILDCARDS } from './event.ts'

/**
 * What a list or a stream selects. `types` holds exact types and prefixes (`pet.*` is the
 * prefix `pet.`); undefined selects every type. Times are ISO 8601 UTC with milliseconds, the
 * form `created_at` is stored in, so text comparison orders them.
 */
export interface EventFilter {
  types?: { exact: string[]; prefixes: string[] }
  objectId?: string
  createdGte?: string
  createdLte?: string
}

export class EventFilterError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message)
    this.name = 'EventFilterError'
  }
}

/**
 * Parses `type` values: each may be a comma-separated list; an entry is an exact type, a family
 * wildcard (`pet.*`) or `*` (everything). Unknown names are refused with the known ones, so a
 * typo is not an empty list that looks like "no events".
 */
export function parseTypeFilter(values: readonly string[] | undefined): EventFilter['types'] {
  if (values === undefined) return undefined
  const entries = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
  if (entries.length === 0) return undefined
  const exact = new Set<string>()
  const prefixes = new Set<string>()
  for (const entry of entries) {
    if (entry === '*') return undefined
    if (entry.endsWith('.*')) {
      if (!EVENT_WILDCARDS.includes(entry)) throw unknownType(entry)
      prefixes.add(entry.slice(0, -1))
    } else if ((EVENT_TYPES as readonly string[]).includes(entry)) exact.add(entry)
    else throw unknownType(entry)
  }
  return { exact: [...exact], prefixes: [...prefixes] }
}

function unknownType(entry: string): EventFilterError {
  return new EventFilterError(
    'type',
    `Unknown event type ${JSON.stringify(entry.slice(0, 100))}: use one of ${EVENT_TYPES.join(', ')}, a wildcard such as ${EVENT_WILDCARDS.join(' or ')}, or *.`,
  )
}

/** `created[gte]`/`created[lte]`: ISO 8601 with a time zone, or Unix seconds. */
export function parseInstant(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined
  let ms: number
  if (/^\d{1,12}$/.test(value)) ms = Number(value) * 1000
  else if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i.test(value)) {
    ms = Date.parse(value)
  } else ms = Number.NaN
  if (!Number.isFinite(ms) || ms < 0 || ms > 253402300799999) {
    throw new EventFilterError(
      param,
      `${param} must be a time as ISO 8601 with a time zone (2026-11-23T12:00:00Z) or Unix seconds (1795435200); got ${JSON.stringify(value.slice(0, 100))}.`,
    )
  }
  return new Date(ms).toISOString()
}

/** Whether an event passes the filter: the stream's test, the same rules as the list's SQL. */
export function matchesFilter(
  event: { type: string; object_id: string; created_at: string },
  filter: EventFilter,
): boolean {
  if (filter.objectId !== undefined && event.object_id !== filter.objectId) return false
  if (filter.createdGte !== undefined && event.created_at < filter.createdGte) return false
  if (filter.createdLte !== undefined && event.created_at > filter.createdLte) return false
  const types = filter.types
  if (types === undefined) return true
  return types.exact.includes(event.type) || types.prefixes.some((p) => event.type.startsWith(p))
}
