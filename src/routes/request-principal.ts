import type { Principal } from '../access/principal.ts'
import type { Scope } from '../access/scopes.ts'

// What the authentication hooks (v1/authentication.ts, v2/authentication.ts) add to a request:
// declared here, above the domain, which knows principals and scopes but not HTTP.
declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** The scope an operation needs; checked after authentication. */
    scope?: Scope
  }
}
