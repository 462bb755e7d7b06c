import type { WithResponse } from './request-options.ts'

/** One page of a list, as the API answers it. */
export interface Page<T> {
  object: 'list'
  data: T[]
  has_more: boolean
  url: string
}

export type Cursor<Id> = { starting_after: Id } | { ending_before: Id } | undefined

/**
 * What `list()` returns: await it for one page, or `for await` over it for every item of
 * every page. Pages are fetched lazily, one at a time, following the keyset cursor: the next
 * page starts after the last id of the previous one (or, when the list was started with
 * `ending_before`, ends before the first id, walking towards newer items).
 */
export class ListPromise<T extends { id: Id }, Id = T['id']> implements PromiseLike<WithResponse<Page<T>>> {
  private first: Promise<WithResponse<Page<T>>> | undefined

  constructor(
    private readonly fetchPage: (cursor: Cursor<Id>) => Promise<WithResponse<Page<T>>>,
    private readonly start: Cursor<Id>,
  ) {}

  private firstPage(): Promise<WithResponse<Page<T>>> {
    this.first ??= this.fetchPage(this.start)
    return this.first
  }

  // biome-ignore lint/suspicious/noThenProperty: awaiting a list for its first page is the point.
  then<R1 = WithResponse<Page<T>>, R2 = never>(
    onfulfilled?: ((page: WithResponse<Page<T>>) => R1 | PromiseLike<R1>) | null,
    // biome-ignore lint/suspicious/noExplicitAny: typed as Promise#then types it.
    onrejected?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.firstPage().then(onfulfilled, onrejected)
  }

  catch<R = never>(
    // biome-ignore lint/suspicious/noExplicitAny: typed as Promise#catch types it.
    onrejected?: ((reason: any) => R | PromiseLike<R>) | null,
  ): Promise<WithResponse<Page<T>> | R> {
    return this.firstPage().catch(onrejected)
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    const backwards = this.start !== undefined && 'ending_before' in this.start
    let page = await this.firstPage()
    for (;;) {
      if (backwards) yield* [...page.data].reverse()
      else yield* page.data
      const edge = backwards ? page.data[0] : page.data.at(-1)
      if (!page.has_more || edge === undefined) return
      page = await this.fetchPage(backwards ? { ending_before: edge.id } : { starting_after: edge.id })
    }
  }

  /** Every item of every page (at most `limit` of them), in one array. */
  async toArray(options: { limit?: number } = {}): Promise<T[]> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    const items: T[] = []
    if (items.length >= limit) return items
    for await (const item of this) {
      items.push(item)
      if (items.length >= limit) break
    }
    return items
  }
}
