import providerStorage from 'oidc-provider/lib/helpers/als.js'

/**
 * oidc-provider runs each request it handles in an AsyncLocalStorage (its lib/helpers/als.js,
 * read back only by its client ID metadata document feature, which provider.ts leaves off). On
 * Node 20 and 22 an AsyncLocalStorage, once run, installs promise hooks that stay on for the
 * life of the process: after the first token request, every promise of every request pays for
 * them (https://nodejs.org/api/async_context.html#asynclocalstoragedisable). The storage is
 * disabled again each time the last provider request in flight is over; the next one enables it.
 */
export class ProviderRequests {
  /** Across every app of the process (tests build several): the storage is one per process. */
  static #inFlight = 0

  /** Call as a request is handed to the provider; `leave` once its response is closed. */
  enter(): void {
    ProviderRequests.#inFlight++
  }

  leave(): void {
    ProviderRequests.#inFlight--
    if (ProviderRequests.#inFlight === 0) providerStorage.disable()
  }
}
