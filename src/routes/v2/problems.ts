import { Type } from '@sinclair/typebox'

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid ID supplied, or invalid parameters',
  401: 'No access token, or one that is invalid, expired or revoked (WWW-Authenticate: Bearer)',
  403: 'The token lacks the scope this operation needs (error="insufficient_scope")',
  404: 'Not found in your account',
  409: 'Conflict with the current state (a sold pet keeps its status)',
  412: 'If-Match does not name the current version',
  413: 'Body too large',
  415: 'Unsupported Content-Type',
  422: 'Validation exception: `errors` lists the fields at fault',
  429: 'Rate limit exceeded',
}

/** The problem responses of a v2 operation, for the OpenAPI document. */
export function v2Problems(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {}
  for (const status of [400, 401, 403, 429, ...statuses]) {
    out[status] = { ...Type.Ref('Problem'), description: DESCRIPTIONS[status] ?? 'Error' }
  }
  return out
}
