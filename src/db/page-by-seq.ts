/** A page of a list: its size and at most one cursor (the id of a row the client has seen). */
export interface Page {
  limit: number
  startingAfter?: string
  endingBefore?: string
}

/** Newest first by `seq`, keyset on the id a cursor names; undefined when it names nothing here. */
export async function pageBySeq<Row extends { seq: number }>(
  page: Page,
  seqOf: (id: string) => Promise<number | undefined>,
  run: (
    where: { op: '<' | '>'; seq: number } | undefined,
    order: 'asc' | 'desc',
    limit: number,
  ) => Promise<Row[]>,
): Promise<{ rows: Row[]; hasMore: boolean } | undefined> {
  if (page.endingBefore !== undefined) {
    const seq = await seqOf(page.endingBefore)
    if (seq === undefined) return undefined
    const rows = await run({ op: '>', seq }, 'asc', page.limit + 1)
    return { rows: rows.slice(0, page.limit).reverse(), hasMore: rows.length > page.limit }
  }
  let where: { op: '<'; seq: number } | undefined
  if (page.startingAfter !== undefined) {
    const seq = await seqOf(page.startingAfter)
    if (seq === undefined) return undefined
    where = { op: '<', seq }
  }
  const rows = await run(where, 'desc', page.limit + 1)
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit }
}
