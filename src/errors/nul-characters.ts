import { ApiError } from './api-error.ts'

/**
 * PostgreSQL refuses U+0000 in text (SQLite stores it), so a NUL is refused for every input on
 * both dialects, before anything reads the database. Route schemas get the `noNul` keyword
 * (validation.ts); this covers the inputs that have no schema (the dashboard's forms).
 */
export const NUL = '\u0000'

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)'

/**
 * A JSON string may hold half of a surrogate pair (`"\\ud800"`), which is no character at all:
 * neither database can store it as sent (SQLite keeps bytes no UTF-8 reader takes, PostgreSQL
 * replaces it), so the answer would not show what was stored. Route schemas refuse it
 * (the `wellFormed` keyword, validation.ts).
 */
export const LONE_SURROGATE_MESSAGE = 'must be valid Unicode text (it holds a lone UTF-16 surrogate)'

/**
 * The dotted path of the first string under `value` that contains a NUL, else undefined.
 * Iterative, so a deeply nested body cannot exhaust the stack; linear in the size of `value`.
 */
export function findNul(value: unknown, root = ''): string | undefined {
  const pending: [unknown, string][] = [[value, root]]
  while (pending.length > 0) {
    const [item, path] = pending.pop()!
    if (typeof item === 'string') {
      if (item.includes(NUL)) return path
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        const childPath = path === '' ? key : `${path}.${key}`
        if (key.includes(NUL)) return childPath
        pending.push([child, childPath])
      }
    }
  }
  return undefined
}

/** Throws 400 naming the first field (of a form, query or path) that contains a NUL. */
export function assertNoNul(parts: Record<string, unknown>): void {
  for (const part of Object.values(parts)) {
    const param = findNul(part)
    if (param !== undefined) {
      throw new ApiError('parameter_invalid', `Invalid parameter \`${param}\`: it ${NUL_MESSAGE}.`, {
        param,
      })
    }
  }
}
