import type { FastifyInstance, onSendHookHandler } from 'fastify'

/**
 * A deprecated route says so on every response (docs/VERSIONING.md):
 *
 *     app.get('/v1/old', { config: { deprecated: { since: '2027-01-01', sunset: '2027-07-01',
 *       link: 'https://pets.example.com/docs/migrate-old' } } }, handler)
 *
 * adds `Deprecation: @1798761600` (RFC 9745: when it was deprecated), `Sunset: Thu, 01 Jul 2027
 * 00:00:00 GMT` (RFC 8594: when it stops working) and `Link: <…>; rel="deprecation"` (RFC 9745
 * §3: what to read), and marks the operation `deprecated` in the OpenAPI document.
 */
export interface Deprecation {
  /** When the route was deprecated: an ISO 8601 date or date-time. */
  since: string
  /** When it will stop answering, if decided: an ISO 8601 date or date-time after `since`. */
  sunset?: string
  /** A page saying what to use instead. */
  link?: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    deprecated?: Deprecation
  }
}

/** Must run before the routes are registered: it reads each route's options as it is added. */
export function registerDeprecations(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const deprecation = route.config?.deprecated
    if (deprecation === undefined) return
    const headers = deprecationHeaders(deprecation, `${route.method} ${route.url}`)
    const addHeaders: onSendHookHandler = (_request, reply, payload, done) => {
      for (const [name, value] of headers) {
        const existing = name === 'link' ? reply.getHeader('link') : undefined
        reply.header(name, existing === undefined ? value : `${String(existing)}, ${value}`)
      }
      done(null, payload)
    }
    route.onSend = [...toArray(route.onSend), addHeaders]
    route.schema = { ...route.schema, deprecated: true }
  })
}

/** The header fields, computed once per route; a malformed date is the route author's mistake. */
export function deprecationHeaders(deprecation: Deprecation, where: string): [string, string][] {
  const since = parseDate(deprecation.since, `${where}: deprecated.since`)
  const headers: [string, string][] = [['deprecation', `@${Math.floor(since / 1000)}`]]
  if (deprecation.sunset !== undefined) {
    const sunset = parseDate(deprecation.sunset, `${where}: deprecated.sunset`)
    if (sunset <= since) throw new Error(`${where}: deprecated.sunset must come after deprecated.since.`)
    headers.push(['sunset', new Date(sunset).toUTCString()])
  }
  if (deprecation.link !== undefined) {
    if (!URL.canParse(deprecation.link, 'http://localhost'))
      throw new Error(`${where}: deprecated.link must be a URL.`)
    headers.push(['link', `<${deprecation.link}>; rel="deprecation"`])
  }
  return headers
}

function parseDate(value: string, what: string): number {
  const time = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(time)) throw new Error(`${what} must be an ISO 8601 date such as 2027-01-01.`)
  return time
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}
