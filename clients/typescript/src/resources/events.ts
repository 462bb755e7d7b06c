import { EventStream, type EventStreamOptions } from '../event-stream.ts'
import type { Event, EventListParams, EventStreamParams } from '../event-types.ts'
import type { ListPromise } from '../pagination.ts'
import type { RequestOptions, WithResponse } from '../request-options.ts'
import { idPath, Resource } from './resource.ts'

/** `client.events`: what changed in your account, for 30 days (v1, API key with `read:events`). */
export class Events extends Resource {
  /** `GET /v1/event/{id}`. */
  get(id: string, options?: RequestOptions): Promise<WithResponse<Event>> {
    return this.call<Event>({ method: 'GET', path: idPath('/v1/event', id), credential: 'key' }, options)
  }

  /**
   * `GET /v1/event`, newest first: await it for one page, `for await` for every event of every
   * page. `type` takes exact types and wildcards (`['pet.*', 'user.deleted']`).
   */
  list(params: EventListParams = {}, options?: RequestOptions): ListPromise<Event, string> {
    return this.paginate<Event, string>('/v1/event', params, options)
  }

  /**
   * `GET /v1/event/stream`: events as they happen, from now (or after `lastEventId`), as an
   * async iterator that reconnects by itself and resumes where it stopped.
   *
   * ```ts
   * const controller = new AbortController()
   * for await (const event of client.events.stream({ type: 'pet.*' }, { signal: controller.signal })) {
   *   console.log(event.type, event.data.object)
   * }
   * ```
   */
  stream(params: EventStreamParams = {}, options: EventStreamOptions = {}): EventStream {
    return new EventStream(this.core, params, options)
  }
}
