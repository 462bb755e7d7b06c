import type { FastifyReply, FastifyRequest } from 'fastify'
import { isScope, type Scope } from '../access/scopes.ts'
import type { Notice } from '../web/layout.ts'
import type { DashboardSession } from './sessions.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard account; set by the dashboard's onRequest hook. */
    dashboardSession: DashboardSession | null
  }
  interface FastifyContextConfig {
    /** Dashboard routes reachable without signing in (sign-in, sign-up, assets). */
    dashboardPublic?: boolean
  }
}

/** The session of a route that requires one (the onRequest hook already redirected the others). */
export function sessionOf(request: FastifyRequest): DashboardSession {
  const session = request.dashboardSession
  if (session === null) throw new Error('dashboard route reached without a session')
  return session
}

/**
 * What a CSRF token is bound to: the session it was issued to (its id's hash), or "signed out".
 * A token issued to one session, or before signing in, is refused for any other, even with its
 * secret cookie (a cookie planted by a sibling subdomain, say).
 */
export function csrfBinding(request: FastifyRequest): string {
  return request.dashboardSession === null ? 'signed-out' : `session:${request.dashboardSession.idHash}`
}

export function csrfToken(reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: csrfBinding(reply.request) })
}

/** Sends a full HTML page. */
export function sendPage(reply: FastifyReply, page: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

/** Text form fields: missing or repeated fields read as '' or the first value. */
export function field(body: unknown, name: string): string {
  if (body === null || typeof body !== 'object') return ''
  const value = (body as Record<string, unknown>)[name]
  if (typeof value === 'string') return value
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0]
  return ''
}

/** Every value of a repeated form field (checkboxes). */
export function fields(body: unknown, name: string): string[] {
  if (body === null || typeof body !== 'object') return []
  const value = (body as Record<string, unknown>)[name]
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string')
  return []
}

/** The scopes ticked in a form's scope checkboxes (views/scopes.ts), known ones only, once each. */
export function pickedScopes(body: unknown): Scope[] {
  return [...new Set(fields(body, 'scopes').filter(isScope))]
}

/**
 * The address integrators should call, as the dashboard's examples show it: PUBLIC_URL when
 * configured, else the address the service listens on (`localhost` for every interface; the
 * configured PORT before it listens). Never the request's Host header: a client chooses that, and
 * a page would then show links to wherever the sender of a request pointed them.
 */
export function baseUrlOf(request: FastifyRequest): string {
  const { publicUrl, port } = request.server.deps.config
  if (publicUrl !== undefined) return publicUrl
  const listening = request.server.server.address()
  if (listening === null || typeof listening === 'string') return `http://localhost:${port}`
  const { address } = listening
  const host =
    address === '0.0.0.0' || address === '::' ? 'localhost' : address.includes(':') ? `[${address}]` : address
  return `http://${host}:${listening.port}`
}

export function query(request: FastifyRequest, name: string): string {
  return field(request.query, name).trim()
}

/** A pet's or order's id as a URL or a filter holds it: a positive integer, or undefined. */
export function positiveInt(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) && Number(text) > 0 ? Number(text) : undefined
}

/** Messages shown after a redirect, chosen by a code in the query (never free text from it). */
const NOTICES: Record<string, Notice> = {
  welcome: {
    kind: 'success',
    text: 'Welcome! Your account is ready. Create an API key to start calling the API.',
  },
  signed_out: { kind: 'info', text: 'You are signed out.' },
  signed_in_required: { kind: 'info', text: 'Please sign in to continue.' },
  key_revoked: {
    kind: 'success',
    text: 'The API key was revoked. Requests that use it are refused from now on.',
  },
  password_changed: {
    kind: 'success',
    text: 'Your password was changed. Every other session of this account was signed out.',
  },
  client_deleted: { kind: 'success', text: 'The OAuth app was deleted and its tokens stop working.' },
  grant_revoked: { kind: 'success', text: 'Access was revoked; the app must ask you again.' },
  webhook_test_sent: {
    kind: 'success',
    text: 'A webhook.test event is on its way to this endpoint; its attempt appears in the delivery log.',
  },
  webhook_resent: { kind: 'success', text: 'The event is queued for this endpoint again.' },
  webhook_disabled: { kind: 'success', text: 'The endpoint is disabled: no events are sent to it.' },
  webhook_enabled: { kind: 'success', text: 'The endpoint is enabled: events are sent to it again.' },
  sandbox_created: {
    kind: 'success',
    text: 'Your sandbox is ready, and you are in it. Create a pet_sk_test_ key under API keys to call it.',
  },
  sandbox_reset: {
    kind: 'success',
    text: 'The sandbox was reset: its data is deleted; its keys, OAuth apps and webhook endpoints stay.',
  },
}

export function noticeFrom(request: FastifyRequest): Notice | undefined {
  const code = query(request, 'notice')
  return Object.hasOwn(NOTICES, code) ? NOTICES[code] : undefined
}

const NEXT_TARGET = /^\/(dashboard|oauth)(\/|\?|$)/
const SAME_SITE = 'http://next.invalid'

/**
 * Only same-site dashboard and OAuth paths may be a `next` target (no open redirects). The
 * target comes back percent-encoded (WHATWG URL, dot segments resolved), so it is always a valid
 * Location header: a raw `€` there would make the redirect throw after the session was created.
 */
export function safeNext(next: string): string | undefined {
  if (!NEXT_TARGET.test(next)) return undefined
  if (next.includes('//') || next.includes('\\') || /[\s<>"]/.test(next) || next.length > 2000)
    return undefined
  let url: URL
  try {
    url = new URL(next, SAME_SITE)
  } catch {
    return undefined
  }
  const target = `${url.pathname}${url.search}`
  if (url.origin !== SAME_SITE || !NEXT_TARGET.test(target) || !/^[\x21-\x7e]+$/.test(target))
    return undefined
  return target
}
