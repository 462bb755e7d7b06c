import { type TProperties, type TSchema, Type } from '@sinclair/typebox'
import { LIMITS } from './common.ts'

/**
 * The query of a list (src/db/keyset-page.ts): the page size, the two cursors (each list says
 * what its ids look like), then the list's own filters; nothing else is accepted.
 */
export function ListQuery<C extends TSchema, F extends TProperties = Record<never, TSchema>>(
  cursors: { starting_after: C; ending_before: C },
  filters: F = {} as F,
) {
  return Type.Object(
    {
      limit: PageSize(),
      starting_after: Type.Optional(cursors.starting_after),
      ending_before: Type.Optional(cursors.ending_before),
      ...filters,
    },
    { additionalProperties: false },
  )
}

function PageSize() {
  return Type.Integer({ minimum: 1, maximum: LIMITS.pageSize, default: 10, description: 'Page size, 1–100.' })
}

/** A cursor that is a string id (usr_…, evt_…, we_…). */
export const IdCursor = (description: string) => Type.String({ maxLength: 64, description })

/** The answer of a list: one page of `item`, and whether there is more after it. */
export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    has_more: Type.Boolean(),
    url: Type.String(),
  })
}
