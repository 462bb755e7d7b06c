import fc from 'fast-check'
import {
  anyJsonValue,
  deepJson,
  headerText,
  hostileContentType,
  hostileId,
  hostileShortString,
  hostileString,
  percentEncode,
} from './hostile.ts'
import type { FuzzRequest } from './invariants.ts'

/**
 * Requests derived from the service's own OpenAPI document, read at test time: every operation
 * it lists is fuzzed, so a new route is fuzzed without touching this file.
 */

export interface Schema {
  $ref?: string
  type?: string | string[]
  enum?: unknown[]
  format?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  pattern?: string
  items?: Schema
  properties?: Record<string, Schema>
  required?: string[]
  /** TypeBox's unions and literals (Type.Union, Type.Literal). */
  anyOf?: Schema[]
  oneOf?: Schema[]
  const?: unknown
}

interface Parameter {
  in: 'path' | 'query' | 'header'
  name: string
  required?: boolean
  schema: Schema
}

interface Operation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: Schema }> }
  security?: Record<string, string[]>[]
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

/** What the fuzzer knows of the account it calls with. */
export interface FuzzContext {
  apiKey: string
  token: string
  petIds: number[]
  userIds: string[]
  userSeqs: number[]
  /** The v2 users' usernames (`/v2/user/{username}`). */
  usernames: string[]
  orderIds: number[]
}

/**
 * `any`: hostile and valid requests mixed (some succeed and change data).
 * `invalid`: every request is refused, so a batch of them must change nothing: bodies carry an
 * unknown member, deletes an If-Match no version has, uploads a file that is not an image.
 */
export type Mode = 'any' | 'invalid'

const UNKNOWN_MEMBER = 'zz_fuzz_unknown'
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

export interface DocumentOperation {
  method: string
  path: string
  operation: Operation
}

export function documentOperations(doc: OpenApiDocument): DocumentOperation[] {
  // The OAuth endpoints answer RFC 6749 errors, not problem documents, and /oauth/authorize
  // HTML pages: oauth-dashboard-fuzz.test.ts fuzzes them with properties of their own.
  const api = Object.entries(doc.paths).filter(
    ([path]) => !path.startsWith('/oauth/') && !path.startsWith('/.well-known/'),
  )
  return api.flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation,
    })),
  )
}

function resolve(schema: Schema, doc: OpenApiDocument): Schema {
  if (schema.$ref === undefined) return schema
  const name = schema.$ref.split('/').pop() ?? ''
  return doc.components.schemas[name] ?? {}
}

/**
 * How values are drawn: `hostile` mostly within the schema and now and then outside it;
 * `well-formed` within it only, with the ids of existing records where a member names one, so
 * requests get past validation and reach the services and the database.
 */
export interface ValueStyle {
  hostile: boolean
  /** Existing values for members of this name (`id`, `ownerId`, …). */
  known: Record<string, unknown[]>
}

/** Values of a schema. */
export function schemaValue(
  schema: Schema,
  doc: OpenApiDocument,
  style: ValueStyle,
  depth = 0,
  name = '',
): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc)
  const orHostile = (valid: fc.Arbitrary<unknown>, hostile: fc.Arbitrary<unknown>) =>
    style.hostile ? fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: hostile, weight: 1 }) : valid
  const known = style.known[name]
  if (known !== undefined && known.length > 0 && !style.hostile) return fc.constantFrom(...known)
  if (s.enum !== undefined) return orHostile(fc.constantFrom(...s.enum), hostileString)
  if (s.const !== undefined) return orHostile(fc.constant(s.const), hostileString)
  const branches = s.anyOf ?? s.oneOf
  if (branches !== undefined && branches.length > 0)
    return fc.oneof(...branches.map((branch) => schemaValue(branch, doc, style, depth, name)))
  const types = s.type === undefined ? [] : [s.type].flat()
  if (types.length > 1)
    return fc.oneof(...types.map((type) => schemaValue({ ...s, type }, doc, style, depth, name)))
  switch (types[0]) {
    case 'string': {
      const max = Math.min(s.maxLength ?? 30, 30)
      const valid = fc
        .string({ unit: 'grapheme', minLength: Math.min(s.minLength ?? 0, max), maxLength: max })
        .map((v) => (s.pattern === '\\S' && v.trim() === '' ? `x${v}`.slice(0, Math.max(1, max)) : v))
      return orHostile(valid, hostileString)
    }
    case 'integer':
      return orHostile(
        fc.integer({ min: Math.max(s.minimum ?? -5, -5), max: Math.min(s.maximum ?? 50, 50) }),
        fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53, 2 ** 64, 1.5, -(2 ** 63)),
      )
    case 'number':
      return fc.double({ noNaN: !style.hostile })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      if (depth > 3) return fc.constant([])
      return fc.array(schemaValue(s.items ?? {}, doc, style, depth + 1), {
        maxLength: Math.min(s.maxItems ?? 5, 5),
      })
    case 'object': {
      if (depth > 3 || s.properties === undefined)
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })
      const required = new Set(s.required ?? [])
      const members = Object.fromEntries(
        Object.entries(s.properties)
          .filter(([, p]) => resolve(p, doc).format !== 'binary')
          .map(([member, p]) => [
            member,
            // A password costs a scrypt hash (~100 ms by design): sent now and then, not half the time.
            member === 'password'
              ? fc.oneof(
                  { arbitrary: fc.constant(undefined), weight: 9 },
                  schemaValue(p, doc, style, depth + 1, member),
                )
              : schemaValue(p, doc, style, depth + 1, depth === 0 ? member : ''),
          ]),
      )
      return fc.record(members, { requiredKeys: Object.keys(members).filter((k) => required.has(k)) })
    }
    default:
      return anyJsonValue
  }
}

type Mutation =
  | { kind: 'none' }
  | { kind: 'wrong-type'; index: number; value: unknown }
  | { kind: 'unknown-member'; key: string; value: unknown }
  | { kind: 'drop-member'; index: number }
  | { kind: 'not-an-object'; value: unknown }
  | { kind: 'duplicate-key'; index: number; value: unknown }
  | { kind: 'prototype-key'; key: '__proto__' | 'constructor'; nested: boolean }
  | { kind: 'deep'; depth: number; shape: 'array' | 'object'; index: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'invalid-utf8'; at: number }
  | { kind: 'huge'; size: number }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant('wrong-type' as const), index: fc.nat(), value: anyJsonValue }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('unknown-member' as const),
      key: fc.oneof(hostileShortString, fc.constantFrom('owner', 'id', 'object', 'version', 'created_at')),
      value: anyJsonValue,
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('drop-member' as const), index: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('not-an-object' as const), value: anyJsonValue }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('duplicate-key' as const),
      index: fc.nat(),
      value: anyJsonValue,
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('prototype-key' as const),
      key: fc.constantFrom('__proto__' as const, 'constructor' as const),
      nested: fc.boolean(),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('deep' as const),
      depth: fc.constantFrom(50, 1000, 3000, 20000),
      shape: fc.constantFrom('array' as const, 'object' as const),
      index: fc.nat(),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('invalid-utf8' as const), at: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('huge' as const), size: fc.constantFrom(100_000, 1_100_000) }),
    weight: 1,
  },
)

/** Applies a mutation: to the value where it is about values, to the JSON text where it is about text. */
function applyMutation(
  value: unknown,
  m: Mutation,
): { value: unknown; text?: (json: string) => string | Buffer } {
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value)
  const copy: Record<string, unknown> = isObject ? { ...(value as Record<string, unknown>) } : {}
  const keys = Object.keys(copy)
  const pick = (index: number) => keys[index % Math.max(keys.length, 1)]
  const insert = (json: string, member: string) =>
    json.startsWith('{') ? `{${member}${json === '{}' ? '' : ','}${json.slice(1)}` : json
  switch (m.kind) {
    case 'none':
      return { value }
    case 'wrong-type': {
      const key = pick(m.index)
      if (!isObject || key === undefined) return { value }
      copy[key] = m.value
      return { value: copy }
    }
    case 'unknown-member':
      if (!isObject) return { value }
      Object.defineProperty(copy, m.key, {
        value: m.value,
        enumerable: true,
        configurable: true,
        writable: true,
      })
      return { value: copy }
    case 'drop-member': {
      const key = pick(m.index)
      if (key !== undefined) delete copy[key]
      return { value: isObject ? copy : value }
    }
    case 'not-an-object':
      return { value: m.value }
    case 'duplicate-key': {
      const key = pick(m.index) ?? 'name'
      return {
        value,
        text: (json) => insert(json, `${JSON.stringify(key)}:${JSON.stringify(m.value) ?? 'null'}`),
      }
    }
    case 'prototype-key': {
      const polluting =
        m.key === '__proto__' ? '{"polluted":true,"name":"x"}' : '{"prototype":{"polluted":true}}'
      const member = `"${m.key}":${polluting}`
      return { value, text: (json) => insert(json, m.nested ? `"category":{${member}}` : member) }
    }
    case 'deep': {
      const key = pick(m.index) ?? 'deep'
      return { value, text: (json) => insert(json, `${JSON.stringify(key)}:${deepJson(m.depth, m.shape)}`) }
    }
    case 'truncate':
      // Never to nothing: an empty form is a valid request for operations without required fields.
      return { value, text: (json) => json.slice(0, 1 + (m.at % Math.max(json.length - 1, 1))) }
    case 'invalid-utf8':
      return {
        value,
        text: (json) => {
          const bytes = Buffer.from(json)
          const at = m.at % Math.max(bytes.length, 1)
          return Buffer.concat([
            bytes.subarray(0, at),
            Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]),
            bytes.subarray(at),
          ])
        },
      }
    case 'huge':
      return { value, text: (json) => insert(json, `"name":${JSON.stringify('h'.repeat(m.size))}`) }
  }
}

const FORM = 'application/x-www-form-urlencoded'

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function formEncode(value: unknown): string {
  // An array body (createWithArray's) as form text: its JSON (String() of an item without a
  // prototype, which the generators make, would throw).
  if (Array.isArray(value)) return JSON.stringify(value) ?? ''
  if (value === null || typeof value !== 'object') return String(value)
  const params = new URLSearchParams()
  for (const [key, v] of Object.entries(value)) {
    // A short array becomes a repeated field; a long one one field (its count times a long name
    // would be gigabytes).
    for (const one of Array.isArray(v) && v.length <= 50 ? v : [v]) {
      params.append(key, one === null ? '' : typeof one === 'object' ? JSON.stringify(one) : String(one))
    }
  }
  return params.toString()
}

const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')

/** multipart/form-data bodies, well formed or not. */
function multipartBody(mode: Mode): fc.Arbitrary<{ payload: Buffer; contentType: string }> {
  const part = fc.record({
    name: fc.oneof(
      fc.constantFrom('file', 'additionalMetadata', '__proto__', 'constructor'),
      hostileShortString,
    ),
    filename: fc.option(
      fc.oneof(fc.constantFrom('a.png', '../../x.png', 'a"b.png', ''), hostileShortString),
      {
        nil: undefined,
      },
    ),
    data: fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      mode === 'any' ? fc.constant(PNG_HEAD) : fc.constant(Buffer.from('NOT AN IMAGE')),
      hostileString.map((s) => Buffer.from(s)),
    ),
  })
  return fc
    .record({
      boundary: fc.oneof(
        fc.constant('fuzzboundary'),
        fc.constantFrom('', 'b'.repeat(300), 'a b', '"q"', 'é'),
      ),
      parts: fc.array(part, { maxLength: 25 }),
      close: fc.boolean(),
      garbage: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: undefined }),
    })
    .map(({ boundary, parts, close, garbage }) => {
      const chunks = parts.map((p) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}\r\n\r\n`,
            'latin1',
          ),
          p.data,
          Buffer.from('\r\n'),
        ]),
      )
      const end = close ? Buffer.from(`--${boundary}--\r\n`) : Buffer.alloc(0)
      return {
        payload: Buffer.concat([
          ...chunks,
          garbage === undefined ? Buffer.alloc(0) : Buffer.from(garbage),
          end,
        ]),
        contentType: `multipart/form-data; boundary=${boundary}`,
      }
    })
}

/** A body for the operation's declared media type, sometimes in another one. */
function bodyOf(
  operation: Operation,
  doc: OpenApiDocument,
  mode: Mode,
): fc.Arbitrary<{ payload?: string | Buffer; contentType?: string }> {
  const content = operation.requestBody?.content
  if (content === undefined) {
    return fc.oneof(
      { arbitrary: fc.constant({}), weight: 9 },
      {
        arbitrary: fc.record({
          payload: fc.constant('{"name":"x"}'),
          contentType: fc.constant('application/json'),
        }),
        weight: 1,
      },
    )
  }
  const [mediaType = 'application/json', media] = Object.entries(content)[0] ?? []
  const schema = media?.schema
  if (mediaType.startsWith('multipart/')) {
    return fc.oneof(
      { arbitrary: multipartBody(mode), weight: 8 },
      {
        arbitrary: fc.record({
          payload: hostileString.map((p) => `NOT MULTIPART ${p}`),
          contentType: hostileContentType,
        }),
        weight: 2,
      },
    )
  }
  const structured = fc
    .tuple(
      schemaValue(schema ?? {}, doc, { hostile: true, known: {} }),
      mutation,
      fc.constantFrom('declared', 'declared', 'declared', 'other'),
    )
    .map(([value, m, encoding]) => {
      const mutated = applyMutation(value, m)
      let body = mutated.value
      if (mode === 'invalid')
        body = isPlainObject(body)
          ? { ...body, [UNKNOWN_MEMBER]: 1 }
          : { [UNKNOWN_MEMBER]: JSON.stringify(body) ?? 'undefined' }
      const declaredForm = mediaType === FORM
      if (declaredForm === (encoding === 'declared')) return { payload: formEncode(body), contentType: FORM }
      const json = JSON.stringify(body) ?? 'null'
      return { payload: mutated.text?.(json) ?? json, contentType: 'application/json' }
    })
  // Any text at all; in a batch that must change nothing it cannot parse as a valid body.
  const raw = fc
    .record({
      payload: fc.oneof(
        hostileString,
        fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      ),
      contentType: hostileContentType,
    })
    .map((body) => (mode === 'invalid' ? { ...body, payload: `${UNKNOWN_MEMBER}=1&${body.payload}` } : body))
  return fc.oneof(
    { arbitrary: structured, weight: 8 },
    { arbitrary: raw, weight: 1 },
    {
      arbitrary: fc
        .tuple(structured, hostileContentType)
        .map(([body, contentType]) => ({ ...body, contentType })),
      weight: 1,
    },
  )
}

function idFor(
  param: Parameter,
  path: string,
  ctx: FuzzContext,
  mode: Mode,
  method: string,
): fc.Arbitrary<string> {
  const known: string[] = path.includes('/user')
    ? param.name === 'username'
      ? ctx.usernames
      : param.schema.type === 'integer'
        ? ctx.userSeqs.map(String)
        : ctx.userIds
    : param.name === 'code'
      ? ['not_found', 'invalid_id', 'internal_error']
      : path.includes('/order')
        ? ctx.orderIds.map(String)
        : ctx.petIds.map(String)
  if (mode === 'invalid' && method === 'DELETE') return hostileId
  return fc.oneof(
    { arbitrary: fc.constantFrom(...(known.length > 0 ? known : ['1'])), weight: 3 },
    { arbitrary: hostileId, weight: 2 },
  )
}

function queryOf(parameters: Parameter[], doc: OpenApiDocument): fc.Arbitrary<string> {
  const one = (p: Parameter) =>
    fc
      .oneof(
        { arbitrary: fc.constant<string[]>([]), weight: p.required ? 1 : 3 },
        {
          arbitrary: schemaValue(p.schema.type === 'array' ? (p.schema.items ?? {}) : p.schema, doc, {
            hostile: true,
            known: {},
          }).map((v) => [(typeof v === 'string' ? v : (JSON.stringify(v) ?? '')).slice(0, 3000)]),
          weight: 4,
        },
        { arbitrary: fc.array(hostileShortString, { minLength: 1, maxLength: 3 }), weight: 2 },
        {
          arbitrary: fc
            .integer({ min: 2, max: 1200 })
            .map((n) => Array.from({ length: n }, (_, i) => `v${i}`)),
          weight: 1,
        },
      )
      .map((values) => values.map((v) => `${percentEncode(p.name)}=${percentEncode(v)}`))
  const extras = fc.array(
    fc.oneof(
      fc
        .tuple(hostileShortString, hostileShortString)
        .map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`),
      fc.constantFrom(
        '%',
        '%zz=1',
        '&&',
        '=',
        'a[b]=c',
        '__proto__[x]=1',
        'limit=1&limit=2',
        'x=%00',
        'x=%FF%FE',
      ),
    ),
    { maxLength: 2 },
  )
  return fc
    .tuple(fc.tuple(...parameters.map(one)), extras)
    .map(([pairs, more]) => [...pairs.flat(), ...more].join('&'))
}

function authOf(operation: Operation, ctx: FuzzContext): fc.Arbitrary<Record<string, string>> {
  const schemes = new Set((operation.security ?? []).flatMap((s) => Object.keys(s)))
  const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`
  const hostile: fc.Arbitrary<Record<string, string>> = fc.oneof(
    fc.constant<Record<string, string>>({}),
    fc.constantFrom<Record<string, string>>(
      { authorization: ctx.apiKey },
      { authorization: `${ctx.apiKey} ${ctx.apiKey}` },
      { authorization: `Bearer ${ctx.apiKey}x` },
      { authorization: 'Bearer' },
      { authorization: 'Basic' },
      { authorization: 'Basic !!!notbase64' },
      { authorization: `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}` },
      { authorization: `Bearer ${ctx.token.slice(0, -5)}AAAAA` },
      { authorization: 'Bearer a.b.c' },
      { authorization: 'Digest username="x"' },
      { api_key: `${ctx.apiKey.slice(0, -1)}Z` },
    ),
    headerText.map((v) => ({ authorization: v })),
    hostileShortString.map((v) => ({ authorization: basic(v) })),
  )
  const valid: Record<string, string>[] = []
  if (schemes.has('apiKeyBasic')) valid.push({ authorization: basic(ctx.apiKey) })
  if (schemes.has('apiKeyBearer')) valid.push({ authorization: `Bearer ${ctx.apiKey}` })
  if (schemes.has('petstore_auth')) valid.push({ authorization: `Bearer ${ctx.token}` })
  if (schemes.has('api_key')) valid.push({ api_key: ctx.apiKey })
  if (valid.length === 0) return hostile
  return fc.oneof({ arbitrary: fc.constantFrom(...valid), weight: 6 }, { arbitrary: hostile, weight: 1 })
}

function headersOf(mode: Mode, method: string): fc.Arbitrary<Record<string, string>> {
  const optional = (name: string, value: fc.Arbitrary<string>, freq: number) =>
    fc.option(
      value.map((v) => ({ [name]: v })),
      { nil: {}, freq },
    )
  return fc
    .tuple(
      optional(
        'if-match',
        fc.oneof(
          fc.constantFrom('"1"', '"2"', '*', 'W/"1"', '"1", "2"', '"99999999999999999999"'),
          headerText,
        ),
        3,
      ),
      optional('idempotency-key', headerText, 6),
      optional('accept', headerText, 8),
      optional('request-id', headerText, 8),
      optional('accept-encoding', fc.constantFrom('gzip', 'br', 'identity;q=0', '*'), 8),
    )
    .map((parts) => {
      const headers = Object.assign({}, ...parts) as Record<string, string>
      // A delete that succeeded would change data; a version no object ever has keeps it refused.
      if (mode === 'invalid' && method === 'DELETE') headers['if-match'] = '"0"'
      return headers
    })
}

/** A hostile request for one operation: any part of it may be out of bounds. */
function hostileRequest(
  entry: DocumentOperation,
  doc: OpenApiDocument,
  ctx: FuzzContext,
  mode: Mode,
): fc.Arbitrary<FuzzRequest> {
  const { path, operation } = entry
  const parameters = operation.parameters ?? []
  const pathParams = parameters.filter((p) => p.in === 'path')
  const queryParams = parameters.filter((p) => p.in === 'query')
  const method = fc.oneof(
    { arbitrary: fc.constant(entry.method), weight: 19 },
    // Another method on the same path: 405 (or another operation's 4xx); never DELETE in a batch
    // that must change nothing.
    { arbitrary: fc.constantFrom(...METHODS.filter((m) => mode === 'any' || m !== 'DELETE')), weight: 1 },
  )
  return fc
    .record({
      method,
      ids: fc.tuple(...pathParams.map((p) => idFor(p, path, ctx, mode, entry.method))),
      query: queryOf(queryParams, doc),
      auth: authOf(operation, ctx),
      body: bodyOf(operation, doc, mode),
      headers: headersOf(mode, entry.method),
      trailingSlash: fc.boolean(),
    })
    .map(({ method: m, ids, query, auth, body, headers, trailingSlash }) => {
      let i = 0
      const url = path.replace(/\{[^}]+\}/g, () => ids[i++] ?? '1') + (trailingSlash ? '/' : '')
      const all: Record<string, string> = { ...headers, ...auth }
      let { payload, contentType } = body
      // Another method on this path may be another operation: in a batch that must change
      // nothing, it gets a body no operation takes.
      if (mode === 'invalid' && m !== entry.method) {
        payload = `{"${UNKNOWN_MEMBER}":1}`
        contentType = 'application/json'
      }
      if (contentType !== undefined) all['content-type'] = contentType
      if (mode === 'invalid' && m === 'DELETE') all['if-match'] = '"0"'
      return {
        operation: `${entry.method} ${path}`,
        method: m,
        url: query === '' ? url : `${url}?${query}`,
        headers: all,
        ...(payload === undefined || m === 'GET' || m === 'HEAD' ? {} : { payload }),
      }
    })
}

/** Existing records, by the name of the member or parameter that would name them. */
function knownValues(path: string, ctx: FuzzContext): Record<string, unknown[]> {
  const users = path.includes('/user')
  return {
    id: users ? ctx.userSeqs : path.includes('/order') ? ctx.orderIds : ctx.petIds,
    petId: ctx.petIds,
    pet_id: ctx.petIds,
    orderId: ctx.orderIds,
    userId: ctx.userSeqs,
    username: ctx.usernames,
    ownerId: ctx.userIds,
    owner_id: ctx.userIds,
    code: ['not_found', 'invalid_id', 'internal_error'],
    status: path.includes('/order') ? ['placed', 'approved', 'delivered'] : ['available', 'pending', 'sold'],
    tags: ['fuzz', 'other'],
  }
}

/**
 * A request the operation takes (or refuses for a reason of state: 404, 409, 412): within the
 * schema, with the ids of existing records, the declared media type and valid credentials.
 */
/** One value out of bounds where everything else is right: what reaches the code behind validation. */
interface Fault {
  where: 'body' | 'query' | 'path'
  index: number
  value: unknown
}

const fault: fc.Arbitrary<Fault> = fc.record({
  where: fc.constantFrom('body' as const, 'body' as const, 'query' as const, 'path' as const),
  index: fc.nat(),
  value: fc.oneof({ arbitrary: hostileString, weight: 3 }, { arbitrary: anyJsonValue, weight: 1 }),
})

function faultText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined')
}

function withFault(value: unknown, f: Fault | undefined): unknown {
  if (f?.where !== 'body' || !isPlainObject(value)) return value
  const keys = Object.keys(value)
  const key = keys.length === 0 ? 'name' : keys[f.index % keys.length]!
  return { ...value, [key]: f.value }
}

function wellFormedRequest(
  entry: DocumentOperation,
  doc: OpenApiDocument,
  ctx: FuzzContext,
  withOneFault: boolean,
): fc.Arbitrary<FuzzRequest> {
  const { path, operation } = entry
  const known = knownValues(path, ctx)
  const style: ValueStyle = { hostile: false, known }
  const parameters = operation.parameters ?? []
  const ids = parameters
    .filter((p) => p.in === 'path')
    .map((p) => {
      const values =
        p.in === 'path' && path.includes('/user') && p.schema.type !== 'integer' && p.name !== 'username'
          ? ctx.userIds
          : known[p.name]
      return fc.constantFrom(...(values ?? ['1']).map(String))
    })
  const query = parameters
    .filter((p) => p.in === 'query')
    .map((p) =>
      fc.option(
        (p.schema.type === 'array'
          ? fc.array(schemaValue(p.schema.items ?? {}, doc, style, 1, p.name), { minLength: 1, maxLength: 3 })
          : schemaValue(p.schema, doc, style, 1, p.name).map((v) => [v])
        ).map((values) => values.map((v) => `${p.name}=${percentEncode(String(v))}`).join('&')),
        { nil: '', freq: p.required ? 1000 : 2 },
      ),
    )
  const content = Object.entries(operation.requestBody?.content ?? {})[0]
  const body: fc.Arbitrary<{ payload?: string | Buffer; contentType?: string } | { value: unknown }> =
    content === undefined
      ? fc.constant({})
      : content[0].startsWith('multipart/')
        ? hostileShortString.map((metadata) => {
            const boundary = 'wellformedboundary'
            return {
              payload: Buffer.concat([
                Buffer.from(
                  `--${boundary}\r\nContent-Disposition: form-data; name="additionalMetadata"\r\n\r\n${metadata}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
                ),
                PNG_HEAD,
                Buffer.from(`\r\n--${boundary}--\r\n`),
              ]),
              contentType: `multipart/form-data; boundary=${boundary}`,
            }
          })
        : schemaValue(content[1].schema, doc, style).map((value) => ({ value }))
  const schemes = new Set((operation.security ?? []).flatMap((s) => Object.keys(s)))
  const auth: Record<string, string> = schemes.has('petstore_auth')
    ? { authorization: `Bearer ${ctx.token}` }
    : schemes.has('apiKeyBasic')
      ? { authorization: `Basic ${Buffer.from(`${ctx.apiKey}:`).toString('base64')}` }
      : {}
  return fc
    .record({
      ids: fc.tuple(...ids),
      query: fc.tuple(...query),
      body,
      ifMatch: fc.option(fc.constantFrom('*', '"1"', '"2"', '"3"'), { nil: undefined, freq: 3 }),
      fault: withOneFault ? fault : fc.constant(undefined),
    })
    .map(({ ids: values, query: pairs, body: generated, ifMatch, fault: f }) => {
      const pathIds = [...values]
      if (f?.where === 'path' && pathIds.length > 0)
        pathIds[f.index % pathIds.length] = percentEncode(faultText(f.value))
      const queryPairs = [...pairs]
      const queryParams = parameters.filter((p) => p.in === 'query')
      if (f?.where === 'query' && queryParams.length > 0) {
        const at = f.index % queryParams.length
        queryPairs[at] = `${queryParams[at]!.name}=${percentEncode(faultText(f.value).slice(0, 3000))}`
      }
      let b: { payload?: string | Buffer; contentType?: string } = generated as { payload?: string | Buffer }
      if ('value' in generated) {
        const value = withFault(generated.value, f)
        b =
          content?.[0] === FORM
            ? { payload: formEncode(value), contentType: FORM }
            : { payload: JSON.stringify(value) ?? 'null', contentType: 'application/json' }
      }
      let i = 0
      const url = path.replace(/\{[^}]+\}/g, () => pathIds[i++] ?? '1')
      const queryText = queryPairs.filter((q) => q !== '').join('&')
      const headers: Record<string, string> = { ...auth }
      if (b.contentType !== undefined) headers['content-type'] = b.contentType
      if (ifMatch !== undefined && ['PUT', 'PATCH', 'DELETE'].includes(entry.method))
        headers['if-match'] = ifMatch
      return {
        operation: `${entry.method} ${path}`,
        method: entry.method,
        url: queryText === '' ? url : `${url}?${queryText}`,
        headers,
        ...(b.payload === undefined ? {} : { payload: b.payload }),
      }
    })
}

/**
 * Requests for one operation of the document. In a batch that must change nothing, only hostile
 * ones (each refused for sure); otherwise also well-formed ones, and well-formed ones with one
 * value out of bounds, which are what reach the code behind validation.
 */
export function operationRequest(
  entry: DocumentOperation,
  doc: OpenApiDocument,
  ctx: FuzzContext,
  mode: Mode,
): fc.Arbitrary<FuzzRequest> {
  if (mode === 'invalid') return hostileRequest(entry, doc, ctx, mode)
  return fc.oneof(
    { arbitrary: hostileRequest(entry, doc, ctx, mode), weight: 2 },
    { arbitrary: wellFormedRequest(entry, doc, ctx, false), weight: 1 },
    { arbitrary: wellFormedRequest(entry, doc, ctx, true), weight: 2 },
  )
}
