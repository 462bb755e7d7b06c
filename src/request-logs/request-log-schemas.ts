import { Type } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../schemas/common.ts'
import { IdCursor, ListOf, ListQuery } from '../schemas/list.ts'
import { STATUS_CLASSES } from './request-log.ts'

export const RequestLogV1Schema = Type.Object(
  {
    id: Type.String({ examples: ['rlog_0GZr7bXk9QqT2mV8wLp4'] }),
    object: Type.Literal('request_log'),
    created_at: Type.String({ format: 'date-time', description: 'When the answer was sent.' }),
    method: Type.String({ examples: ['POST'] }),
    path: Type.String({
      examples: ['/v1/pet/42'],
      description: 'The path as sent, with its query; the values of secret parameters are `***`.',
    }),
    status: Type.Integer({ examples: [400] }),
    error_code: Nullable(
      Type.String({ description: "A failure's problem `code` (or the OAuth `error`); null on success." }),
    ),
    duration_ms: Type.Integer({ description: 'Time from receiving the request to finishing its answer.' }),
    request_id: Type.String({
      examples: ['req_4f0ZkH3T9cW2mQ8xLp1r'],
      description: 'The `Request-Id` answered.',
    }),
    api_key_id: Nullable(Type.String({ description: 'The API key used (`key_…`), if one was.' })),
    oauth_client_id: Nullable(
      Type.String({ description: 'The OAuth client whose token was used, if one was.' }),
    ),
    client_address: Type.String({ description: 'The client address (as TRUST_PROXY lets it be read).' }),
    api_version: Type.String({
      examples: ['v1'],
      description: '`v1`, `v2` or `oauth` (the token endpoint).',
    }),
    request_headers: Nullable(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          'Failures only: the request headers, credentials (`Authorization`, `Cookie`, `api_key`…) shown as `***`.',
      }),
    ),
    request_body: Nullable(
      Type.String({
        description:
          'Failures only: the body sent (as JSON), secrets shown as `***`, cut at 8192 characters.',
      }),
    ),
    response_body: Nullable(
      Type.String({ description: 'Failures only: the answer, credentials removed, cut at 8192 characters.' }),
    ),
  },
  {
    description:
      'One authenticated API request of your account, as the service saw it. Bodies and headers are kept for failures (4xx, 5xx) only, redacted.',
  },
)

export const RequestLogIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The entry id (rlog_…).' }),
})

export const ListRequestLogsQuery = ListQuery(
  {
    starting_after: IdCursor('Last entry id of the previous page.'),
    ending_before: IdCursor('First entry id of the current page.'),
  },
  {
    status_class: Type.Optional(
      StringEnum(STATUS_CLASSES, {
        description: 'Only answers of this class: `2xx`, `3xx`, `4xx` or `5xx`.',
      }),
    ),
    method: Type.Optional(
      Type.String({
        maxLength: 10,
        pattern: '^[A-Za-z]+$',
        description: 'Only this HTTP method (any case).',
      }),
    ),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Only paths that begin with this (`/v1/pet` finds `/v1/pet/42` too).',
      }),
    ),
    credential_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Only requests made with this API key id or OAuth client id.',
      }),
    ),
    request_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Only the request with this `Request-Id`.' }),
    ),
  },
)

export const RequestLogListSchema = ListOf(RequestLogV1Schema)
