import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox'

/**
 * Schema helpers shared by every route. Nullable fields use JSON Schema's type arrays
 * (`["string","null"]`) rather than anyOf: OpenAPI 3.1 reads them, fast-json-stringify
 * serialises them without trying each branch, and validation errors stay single.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<T['static'] | null> {
  const { type, ...rest } = schema as unknown as { type: string; enum?: unknown[] }
  // An enum lists the values allowed whatever the type says: null must be one of them too.
  if (rest.enum !== undefined) rest.enum = [...rest.enum, null]
  return Type.Unsafe<T['static'] | null>({ ...rest, type: [type, 'null'] })
}

export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

export const LIMITS = {
  shortText: 200,
  url: 2048,
  photoUrls: 20,
  tags: 20,
  pageSize: 100,
} as const

/** Free text of at most 200 characters with at least one visible character. */
export const Text = (description: string) =>
  Type.String({ minLength: 1, maxLength: LIMITS.shortText, pattern: '\\S', description })

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI of a page describing this kind of problem.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong in this request, and how to fix it.' }),
    code: Type.String({ description: 'Stable machine-readable code (see /problems/{code}).' }),
    param: Type.Optional(Type.String({ description: 'The parameter at fault, when there is one.' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ param: Type.String(), message: Type.String() }), {
        maxItems: 20,
        description: 'The fields at fault, one entry each: at most 20.',
      }),
    ),
    errors_omitted: Type.Optional(
      Type.Integer({ description: 'How many more fields were at fault than `errors` lists.' }),
    ),
    request_id: Type.String(),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details.', additionalProperties: true },
)

/**
 * The problem responses an authenticated operation may answer, for the OpenAPI document: those
 * every such operation may give (400, 401, 403, 429) and `statuses`, each described by the API
 * version's own words.
 */
export function problemResponsesWith(
  descriptions: Record<number, string>,
): (...statuses: number[]) => Record<number, unknown> {
  return (...statuses) => {
    const out: Record<number, unknown> = {}
    for (const status of [400, 401, 403, 429, ...statuses]) {
      out[status] = { ...Type.Ref('Problem'), description: descriptions[status] ?? 'Error' }
    }
    return out
  }
}

/** The problem responses of a v1 operation. */
export const problemResponses = problemResponsesWith({
  400: 'Invalid parameters',
  401: 'Missing, unknown, revoked or expired credentials',
  403: 'The credential lacks the scope this operation needs',
  404: 'No such object in your account',
  409: 'Conflict with the current state',
  412: 'If-Match does not name the current version',
  413: 'Body too large',
  415: 'Unsupported Content-Type',
  422: 'Idempotency-Key reused with other parameters',
  429: 'Rate limit exceeded',
})

/** OpenAPI security requirement of the API-key operations (either scheme). */
export const API_KEY_SECURITY: Record<string, string[]>[] = [{ apiKeyBasic: [] }, { apiKeyBearer: [] }]
