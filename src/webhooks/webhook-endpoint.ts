import type { Static } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { WebhookAttemptsTable, WebhookEndpointsTable } from '../db/schema.ts'
import { EVENT_TYPES, EVENT_WILDCARDS } from '../events/event.ts'
import type { WebhookDeliverySchema, WebhookEndpointSchema } from './webhook-schemas.ts'

/**
 * The event of "send test event": to one endpoint only, never listed by the events API nor
 * subscribed to (an endpoint subscribes to EVENT_TYPES).
 */
export const TEST_EVENT_TYPE = 'webhook.test'

export type EndpointRow = Selectable<WebhookEndpointsTable>
export type AttemptRow = Selectable<WebhookAttemptsTable>

/** The endpoint as v1 shows it: the route schema is the one description of its shape. */
export type WebhookEndpointV1 = Static<typeof WebhookEndpointSchema>

export function toEndpointV1(row: EndpointRow): WebhookEndpointV1 {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    enabled_events: JSON.parse(row.enabled_events) as string[],
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** One delivery attempt as v1 shows it (the route schema's type). */
export type WebhookDeliveryV1 = Static<typeof WebhookDeliverySchema>

export function toDeliveryV1(row: AttemptRow): WebhookDeliveryV1 {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    attempted_at: row.attempted_at,
    response_status: row.response_status,
    latency_ms: row.latency_ms,
    response_body_excerpt: row.response_body_excerpt,
    error: row.error,
    next_attempt_at: row.next_attempt_at,
  }
}

/** Whether a subscription (`pet.created`, `pet.*`, `*`) covers an event type. */
export function subscribes(enabledEvents: readonly string[], type: string): boolean {
  return enabledEvents.some(
    (pattern) =>
      pattern === '*' ||
      pattern === type ||
      (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))),
  )
}

/** The enabled_events entries that name nothing: an unknown type or resource. */
export function unknownEventPatterns(enabledEvents: readonly string[]): string[] {
  const known: readonly string[] = [...EVENT_TYPES, ...EVENT_WILDCARDS, '*']
  return enabledEvents.filter((p) => !known.includes(p))
}
