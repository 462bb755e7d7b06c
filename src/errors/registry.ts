/**
 * Every error code the API can answer, in one place. The error handler renders them as
 * RFC 9457 problem documents whose `type` is `/problems/{code}`, a page that explains the
 * code; docs/errors.md lists them all (a test checks that it does).
 */
export const ERRORS = {
  // 400
  invalid_request: { status: 400, title: 'Invalid request', description: 'The request is malformed.' },
  malformed_body: {
    status: 400,
    title: 'Malformed request body',
    description: 'The body could not be parsed in its declared content type (for example, broken JSON).',
  },
  parameter_missing: {
    status: 400,
    title: 'Missing parameter',
    description: 'A required parameter is absent.',
  },
  parameter_invalid: {
    status: 400,
    title: 'Invalid parameter',
    description: 'A parameter has the wrong type, format or length; `param` names it.',
  },
  parameter_unknown: {
    status: 400,
    title: 'Unknown parameter',
    description: 'The request carries a parameter the operation does not take; `param` names it.',
  },
  owner_not_found: {
    status: 400,
    title: 'Unknown owner',
    description: '`owner_id` does not name a user of this account. Create the user first.',
  },
  order_pet_not_found: {
    status: 400,
    title: 'Invalid Order',
    description:
      "The order's `petId` (v1: `pet_id`) does not name a pet of this account. Order a pet of your account.",
  },
  invalid_order: {
    status: 400,
    title: 'Invalid Order',
    description:
      'A Petstore order body (`POST /v2/store/order`) breaks the `Order` schema; `errors` lists the fields at fault.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    description: '`starting_after` or `ending_before` does not name an object of this list.',
  },
  webhook_url_refused: {
    status: 400,
    title: 'Webhook URL refused',
    description:
      'The endpoint URL must be https and must not resolve to a loopback, private, link-local, carrier-grade NAT, multicast or other non-public address; the detail says which rule it broke. `WEBHOOKS_ALLOW_INSECURE=true` allows http and loopback or private addresses for local development, never link-local ones such as the metadata service.',
  },
  invalid_id: {
    status: 400,
    title: 'Invalid ID supplied',
    description: 'The id is missing, not an integer, or out of range.',
  },
  invalid_username: {
    status: 400,
    title: 'Invalid username supplied',
    description:
      'The username in the path is empty, longer than 200 characters or holds a control character, so it cannot name a user.',
  },
  login_failed: {
    status: 400,
    title: 'Invalid username/password supplied',
    description:
      'No user of your account has this username and password (`GET /v2/user/login`). Failed logins are counted: past 10 for one username, or 20 from one address, in 15 minutes, the answer is 429 until the window moves on.',
  },
  // 401
  api_key_missing: {
    status: 401,
    title: 'API key required',
    description:
      'Send your API key as the HTTP Basic user name with an empty password (`curl -u pet_sk_...: ...`) or as `Authorization: Bearer pet_sk_...`.',
  },
  api_key_invalid: {
    status: 401,
    title: 'Invalid API key',
    description: 'The API key is malformed, fails its checksum, or is not known.',
  },
  api_key_revoked: {
    status: 401,
    title: 'API key revoked',
    description: 'The API key was revoked; create a new one.',
  },
  api_key_expired: {
    status: 401,
    title: 'API key expired',
    description: 'The API key has passed its expiry time.',
  },
  // 403
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description: 'The credential is valid but not allowed to perform this operation.',
  },
  cors_not_enabled: {
    status: 403,
    title: 'Cross-origin requests are off',
    description:
      "A page of another origin asked to call the service (a CORS preflight), and the service lets no other origin's pages read its answers until its operator lists that origin in `CORS_ORIGINS`.",
  },
  // 404
  not_found: { status: 404, title: 'Not found', description: 'No route matches this method and path.' },
  pet_not_found: {
    status: 404,
    title: 'Pet not found',
    description: 'No pet with this id exists in your account.',
  },
  order_not_found: {
    status: 404,
    title: 'Order not found',
    description: 'No order with this id exists in your account.',
  },
  webhook_endpoint_not_found: {
    status: 404,
    title: 'Webhook endpoint not found',
    description: 'No webhook endpoint with this id exists in your account.',
  },
  user_not_found: {
    status: 404,
    title: 'User not found',
    description: 'No user with this id exists in your account.',
  },
  request_log_not_found: {
    status: 404,
    title: 'Request log entry not found',
    description:
      'No request log entry with this id exists in your account; entries are kept for `REQUEST_LOG_RETENTION_DAYS` (7 by default).',
  },
  event_not_found: {
    status: 404,
    title: 'Event not found',
    description:
      'No event with this id exists in your account; events are kept for `EVENTS_RETENTION_DAYS` (30 by default).',
  },
  // 405
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but does not take this method.',
  },
  // 408
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description:
      "The request's headers or body did not arrive within the time the server allows (`HTTP_HEADERS_TIMEOUT_SECONDS`, `HTTP_REQUEST_TIMEOUT_SECONDS`); the connection is closed. Send the request again, all at once.",
  },
  // 409
  invalid_status_transition: {
    status: 409,
    title: 'Invalid status transition',
    description: 'Pets move available⇄pending, available→sold and pending→sold; a sold pet keeps its status.',
  },
  username_taken: {
    status: 409,
    title: 'Username taken',
    description: 'Another user of your account has this username; usernames are unique in an account.',
  },
  user_id_taken: {
    status: 409,
    title: 'User id taken',
    description: 'Another user of your account has this v2 (integer) user id.',
  },
  user_has_pets: {
    status: 409,
    title: 'User still owns pets',
    description: 'A user cannot be deleted while pets reference it; reassign or delete those pets first.',
  },
  idempotency_request_in_progress: {
    status: 409,
    title: 'Request in progress',
    description: 'A request with this Idempotency-Key is still running; retry after it completes.',
  },
  webhook_endpoint_limit: {
    status: 409,
    title: 'Too many webhook endpoints',
    description:
      'The account already has as many webhook endpoints as it may (`WEBHOOKS_ENDPOINTS_PER_ACCOUNT`, 16 by default). Delete one you no longer use, or subscribe an existing one to more events.',
  },
  concurrent_change: {
    status: 409,
    title: 'Concurrent change',
    description:
      'Another request changed related data at the same moment; nothing was changed. Retry the request.',
  },
  // 412
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    description:
      'The If-Match version is not the current one: fetch the object again and re-apply your change.',
  },
  // 413
  body_too_large: {
    status: 413,
    title: 'Request body too large',
    description: 'The body exceeds the size limit.',
  },
  // 415
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Send `application/json` or `application/x-www-form-urlencoded` as the operation allows.',
  },
  // 422
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'This Idempotency-Key was already used with different parameters; use a new key.',
  },
  validation_failed: {
    status: 422,
    title: 'Validation exception',
    description: 'The body is well formed but some fields are invalid; `errors` lists them.',
  },
  // 429
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description: 'The rate limit was exceeded; wait for the number of seconds in `Retry-After`.',
  },
  too_many_streams: {
    status: 429,
    title: 'Too many event streams',
    description:
      'The account already has as many event streams open on this instance as it may (`EVENTS_STREAMS_PER_ACCOUNT`); close one before opening another.',
  },
  too_many_downloads: {
    status: 429,
    title: 'Too many downloads',
    description:
      "Answers still on their way to your client address (images, large lists) hold as much of the server's memory as one address may (a quarter of `RESPONSE_BUFFER_BYTES`); read them or close their connections, then retry after `Retry-After` seconds.",
  },
  // 431
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    description:
      "The request's headers are larger than the server accepts (16 KiB in all); the connection is closed.",
  },
  // 499 (nginx's code: no client receives it)
  client_closed_request: {
    status: 499,
    title: 'Client closed request',
    description:
      'The client closed the connection before the answer was ready, and the costly work left for it (hashing passwords) was dropped; nothing was changed. No client receives this answer: its connection is gone.',
  },
  // 5xx
  internal_error: {
    status: 500,
    title: 'Internal error',
    description:
      'Something went wrong on our side; the request changed nothing. Retry, quoting the request id if it persists.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description:
      'The service is shutting down, not ready to take requests, or busy sending large answers to other clients (`RESPONSE_BUFFER_BYTES`); retry after `Retry-After` seconds (another instance may answer).',
  },
  database_unavailable: {
    status: 503,
    title: 'Database unavailable',
    description:
      'The database did not answer in time, refused the connection or is locked by someone else; the request did not complete. Retry after `Retry-After` seconds; send creates with an `Idempotency-Key`, so that a retry never creates twice.',
  },
  storage_full: {
    status: 507,
    title: 'Storage full',
    description:
      'The database has no room left for this write (its disk or size limit is full); nothing was changed. Reads still work; the operator must free space before writes succeed again.',
  },
  // OAuth 2.0 bearer tokens (v2) and image uploads; appended by issue 3.
  token_missing: {
    status: 401,
    title: 'Access token required',
    description:
      'The v2 API takes an OAuth 2.0 access token: `Authorization: Bearer <token>` from `POST /oauth/token` (some operations also take an API key in the `api_key` header).',
  },
  token_invalid: {
    status: 401,
    title: 'Invalid access token',
    description:
      'The access token is malformed, not signed by this service, expired or revoked (`WWW-Authenticate: Bearer error="invalid_token"`); get a new one.',
  },
  unsupported_file_type: {
    status: 415,
    title: 'Unsupported file type',
    description: 'Upload a JPEG, PNG, GIF or WebP image in the multipart field `file`.',
  },
  image_quota_exceeded: {
    status: 413,
    title: 'Image storage quota exceeded',
    description:
      'The image would take the images your account keeps past its quota; `quota_bytes` and `used_bytes` say where it stands. Delete photos (drop their URLs from a pet, or delete the pet) to make room.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>

export type ErrorCode = keyof typeof ERRORS

export function problemType(code: ErrorCode): string {
  return `/problems/${code}`
}
