// The AsyncLocalStorage oidc-provider runs each of its requests in (its lib/helpers/als.js; the
// package has no "exports" map, so the module is importable). See provider-context.ts.
declare module 'oidc-provider/lib/helpers/als.js' {
  import type { AsyncLocalStorage } from 'node:async_hooks'

  const als: AsyncLocalStorage<unknown>
  export default als
}
