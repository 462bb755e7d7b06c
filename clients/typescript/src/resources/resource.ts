import type { Call, Core } from '../core.ts'
import { type Cursor, ListPromise, type Page } from '../pagination.ts'
import { type RequestOptions, type WithResponse, withResponse } from '../request-options.ts'

/** Shared plumbing of the resource namespaces (`client.pets`, `client.users`). */
export abstract class Resource {
  private readonly warned = new Set<string>()

  constructor(protected readonly core: Core) {}

  /**
   * A deprecated call keeps working for one more minor release and says so, once per client
   * (console.warn: the library runs in browsers too), naming what replaces it.
   */
  protected warnOnce(deprecated: string, replacement: string): void {
    if (this.warned.has(deprecated)) return
    this.warned.add(deprecated)
    console.warn(
      `@pet-service/client: ${deprecated} is deprecated and will be removed in 0.3.0; use ${replacement}.`,
    )
  }

  protected async call<T extends object>(call: Call, options?: RequestOptions): Promise<WithResponse<T>> {
    const { body, info } = await this.core.send<T>(call, options)
    return withResponse((body ?? {}) as T, info)
  }

  protected paginate<T extends { id: Id }, Id extends string | number>(
    path: string,
    params: Record<string, unknown> & { starting_after?: Id; ending_before?: Id },
    options?: RequestOptions,
  ): ListPromise<T, Id> {
    const { starting_after, ending_before, ...filters } = params
    const start: Cursor<Id> =
      starting_after !== undefined
        ? { starting_after }
        : ending_before !== undefined
          ? { ending_before }
          : undefined
    return new ListPromise<T, Id>(
      (cursor) =>
        this.call<Page<T>>(
          {
            method: 'GET',
            path,
            query: { ...(filters as Call['query']), ...cursor },
            credential: 'key',
          },
          options,
        ),
      start,
    )
  }
}

export function idPath(prefix: string, id: string | number): string {
  if (id === '' || id === undefined || id === null) throw new TypeError('An id is required.')
  return `${prefix}/${encodeURIComponent(String(id))}`
}
