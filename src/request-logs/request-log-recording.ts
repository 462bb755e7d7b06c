import type { IncomingHttpHeaders } from 'node:http'
import { isSecretName, redactFields, redactSecretValues, urlForLogs } from '../errors/redact.ts'
import { newTimeOrderedId } from '../lib/ids.ts'
import { BODY_CAP_CHARACTERS, capped, HEADER_CAP_CHARACTERS, type NewRequestLog } from './request-log.ts'

/** What an entry is made of, from an API request or from the OAuth token endpoint's raw one. */
export interface RequestFacts {
  accountId: string
  credentialKind: 'api_key' | 'oauth'
  credentialId: string
  method: string
  url: string
  status: number
  durationMs: number
  requestId: string
  clientAddress: string
  apiVersion: string
  headers: IncomingHttpHeaders
  /** The parsed body (JSON or form fields), when there is one. */
  body: unknown
  /** The answer's text, for a failure. */
  answer: string | undefined
}

/** The entry as stored: the path's secret parameters, and a failure's headers and bodies, redacted. */
export function requestLogEntry(facts: RequestFacts): NewRequestLog {
  const failed = facts.status >= 400
  return {
    id: newTimeOrderedId('rlog'),
    account_id: facts.accountId,
    created_at: new Date().toISOString(),
    method: facts.method,
    path: capped(redactSecretValues(urlForLogs(facts.url)), 2048),
    status: facts.status,
    error_code: failed ? errorCodeOf(facts.answer) : null,
    duration_ms: Math.round(facts.durationMs),
    request_id: facts.requestId,
    credential_kind: facts.credentialKind,
    credential_id: facts.credentialId,
    client_address: facts.clientAddress,
    api_version: facts.apiVersion,
    request_headers: failed ? JSON.stringify(redactedHeaders(facts.headers)) : null,
    request_body: failed ? redactedBody(facts.body) : null,
    response_body:
      failed && facts.answer !== undefined
        ? capped(redactSecretValues(facts.answer), BODY_CAP_CHARACTERS)
        : null,
  }
}

export function apiVersionOf(url: string): string {
  return url.startsWith('/v2') ? 'v2' : 'v1'
}

/** The problem's `code`, or the OAuth error's `error`, of a failure's answer. */
function errorCodeOf(answer: string | undefined): string | null {
  if (answer === undefined) return null
  try {
    const parsed = JSON.parse(answer) as { code?: unknown; error?: unknown }
    const code = typeof parsed.code === 'string' ? parsed.code : parsed.error
    return typeof code === 'string' ? redactSecretValues(code).slice(0, 100) : null
  } catch {
    return null
  }
}

/** Every header, its value cut short; the credential headers' (by name) and credentials' (by shape) values hidden. */
function redactedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const text = Array.isArray(value) ? value.join(', ') : value
    out[name] = isSecretName(name) ? '***' : capped(redactSecretValues(text), HEADER_CAP_CHARACTERS)
  }
  return out
}

function redactedBody(body: unknown): string | null {
  if (body === undefined || body === null) return null
  if (Buffer.isBuffer(body)) return `(${body.length} bytes, not kept)`
  if (typeof body !== 'object' && typeof body !== 'string') return capped(String(body))
  if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function')
    return '(a stream, not kept)'
  return capped(JSON.stringify(redactFields(body)))
}
