import { ApiError } from '../errors/api-error.ts'
import { hasScope, type Principal } from './principal.ts'
import type { Scope } from './scopes.ts'

/**
 * 403 insufficient_scope naming the scope the operation needs, for API keys and OAuth tokens
 * alike. `headers` lets the v2 API add its RFC 6750 §3.1 challenge.
 */
export function assertScope(
  principal: Principal | null,
  scope: Scope | undefined,
  headers?: (scope: Scope) => Record<string, string>,
): void {
  if (scope === undefined || principal === null || hasScope(principal, scope)) return
  throw new ApiError(
    'insufficient_scope',
    `This ${principal.via === 'api_key' ? 'API key' : 'token'} lacks the ${scope} scope this operation needs.`,
    {
      ...(headers === undefined ? {} : { headers: headers(scope) }),
      extensions: { required_scope: scope },
    },
  )
}
