import { type SelectQueryBuilder, sql } from 'kysely'
import type { Database } from './schema.ts'

/**
 * Keyset pagination, the one way every list of the API pages: newest first by the table's
 * internal `seq` (the order of creation, whatever the ids), the cursors being ids of the list's
 * own rows. A page costs the same at any depth, and rows inserted while a client pages never
 * shift the pages it has not read yet. One row more than asked is fetched to tell whether there
 * is more.
 */
export interface PageRequest<Cursor> {
  limit: number
  /** The last row of the previous page: the next, older page. */
  startingAfter?: Cursor
  /** The first row of the current page: the previous, newer page. */
  endingBefore?: Cursor
}

export interface Page<Row> {
  rows: Row[]
  hasMore: boolean
}

/**
 * Which way a page walks from its cursor: `first` the newest rows, `after` the rows older than
 * the cursor (starting_after), `before` the rows newer than it (ending_before).
 */
export type Walk = 'first' | 'after' | 'before'

/** The tables a page can walk: those with a `seq` column. */
export type SeqTable = { [T in keyof Database]: 'seq' extends keyof Database[T] ? T : never }[keyof Database]

/**
 * Narrows a query to one page's window over `seq` (`seq` is ignored when walking `first`). The
 * values may be a prepared query's placeholders (db/prepared-query.ts): the walk alone decides
 * the SQL.
 */
export function seqWindow<TB extends SeqTable, O>(
  query: SelectQueryBuilder<Database, TB, O>,
  walk: Walk,
  seq: number | undefined,
  take: number,
): SelectQueryBuilder<Database, TB, O> {
  const column = sql.ref<number>('seq')
  let q = query
  if (walk === 'after' && seq !== undefined) q = q.where(column, '<', seq)
  if (walk === 'before' && seq !== undefined) q = q.where(column, '>', seq)
  // Walking up from an ending_before cursor reads oldest first; keysetPage turns the page round.
  return q.orderBy(column, walk === 'before' ? 'asc' : 'desc').limit(take)
}

/**
 * One page of a list: `seqOf` finds the cursor's `seq` among the rows of the list's owner (not
 * only those the filters keep), `fetch` reads `take` rows of the window (usually through
 * `seqWindow`). Undefined when the cursor names no row, which the service answers as
 * `invalid_cursor`.
 */
export async function keysetPage<Cursor, Row>(
  request: PageRequest<Cursor>,
  seqOf: (cursor: Cursor) => Promise<number | undefined>,
  fetch: (walk: Walk, seq: number | undefined, take: number) => Promise<Row[]>,
): Promise<Page<Row> | undefined> {
  const cursor = request.endingBefore ?? request.startingAfter
  let seq: number | undefined
  if (cursor !== undefined) {
    seq = await seqOf(cursor)
    if (seq === undefined) return undefined
  }
  const walk: Walk =
    request.endingBefore !== undefined ? 'before' : request.startingAfter !== undefined ? 'after' : 'first'
  const rows = await fetch(walk, seq, request.limit + 1)
  const page = rows.slice(0, request.limit)
  if (walk === 'before') page.reverse()
  return { rows: page, hasMore: rows.length > request.limit }
}

/**
 * keysetPage over the query builder. `scope` is the rows of the list's owner (an account, an
 * endpoint): a cursor is looked up by `id` among them, whatever the filters; `select` picks the
 * columns and applies the filters; `map` turns a row into what the list answers.
 */
export function keysetPageOf<TB extends SeqTable, O, Cursor>(
  scope: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest<Cursor>,
  select: (scope: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
): Promise<Page<O> | undefined>
export function keysetPageOf<TB extends SeqTable, O, Cursor, Row>(
  scope: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest<Cursor>,
  select: (scope: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
  map: (row: O) => Row,
): Promise<Page<Row> | undefined>
export async function keysetPageOf<TB extends SeqTable, O, Cursor>(
  scope: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest<Cursor>,
  select: (scope: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
  map: (row: O) => unknown = (row) => row,
): Promise<Page<unknown> | undefined> {
  const page = await keysetPage(
    request,
    async (cursor) => {
      const row = await scope
        .select(sql.ref<number>('seq').as('seq'))
        .where(sql.ref('id'), '=', cursor)
        .executeTakeFirst()
      return row?.seq
    },
    (walk, seq, take) => seqWindow(select(scope), walk, seq, take).execute(),
  )
  return page === undefined ? undefined : { rows: page.rows.map(map), hasMore: page.hasMore }
}
