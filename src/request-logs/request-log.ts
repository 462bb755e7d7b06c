import type { Insertable, Selectable } from 'kysely'
import type { RequestLogTable } from '../db/schema.ts'

export type RequestLogRow = Selectable<RequestLogTable>
export type NewRequestLog = Omit<Insertable<RequestLogTable>, 'seq'>

/**
 * Characters kept of a failure's request or response body (after redaction). Enough for any
 * problem document and for the bodies the API takes (1 MiB at most, but a failing create is a
 * few hundred bytes); a batch of entries stays small whatever clients send.
 */
export const BODY_CAP_CHARACTERS = 8192

/** Characters kept of one request header's value. */
export const HEADER_CAP_CHARACTERS = 512

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const
export type StatusClass = (typeof STATUS_CLASSES)[number]

/** What a list may be narrowed to; every filter is optional and they combine. */
export interface RequestLogFilter {
  statusClass?: StatusClass
  method?: string
  /** A prefix of the path as stored (`/v1/pet` finds `/v1/pet/42` too). */
  path?: string
  /** An API key's id (`key_…`) or an OAuth client's id. */
  credentialId?: string
  requestId?: string
}

/** A text cut at `max` characters (never between the two halves of a character), saying so. */
export function capped(text: string, max = BODY_CAP_CHARACTERS): string {
  if (text.length <= max) return text
  const code = text.charCodeAt(max - 1)
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max
  return `${text.slice(0, end)}…[cut at ${max} characters]`
}

export interface RequestLogV1 {
  id: string
  object: 'request_log'
  created_at: string
  method: string
  path: string
  status: number
  error_code: string | null
  duration_ms: number
  request_id: string
  api_key_id: string | null
  oauth_client_id: string | null
  client_address: string
  api_version: string
  request_headers: Record<string, string> | null
  request_body: string | null
  response_body: string | null
}

export function toRequestLogV1(row: RequestLogRow): RequestLogV1 {
  return {
    id: row.id,
    object: 'request_log',
    created_at: row.created_at,
    method: row.method,
    path: row.path,
    status: Number(row.status),
    error_code: row.error_code,
    duration_ms: Number(row.duration_ms),
    request_id: row.request_id,
    api_key_id: row.credential_kind === 'api_key' ? row.credential_id : null,
    oauth_client_id: row.credential_kind === 'oauth' ? row.credential_id : null,
    client_address: row.client_address,
    api_version: row.api_version,
    request_headers:
      row.request_headers === null ? null : (JSON.parse(row.request_headers) as Record<string, string>),
    request_body: row.request_body,
    response_body: row.response_body,
  }
}
