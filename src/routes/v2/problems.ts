import { problemResponsesWith } from '../../schemas/common.ts'

/** The problem responses of a Petstore operation, in the Petstore's words, for the OpenAPI document. */
export const v2Problems = problemResponsesWith({
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
})
