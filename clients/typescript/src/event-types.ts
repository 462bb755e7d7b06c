/**
 * Events, webhook endpoints and their deliveries, as the v1 API shows them
 * (docs/api.md, "Events"). Written by hand from the API's contract: unlike
 * ./types.ts they are not yet derived from the generated OpenAPI types.
 */

/**
 * Every event type the service records, in the order it documents them: the list `petctl
 * trigger` offers (a test checks it against the service's own list).
 */
export const EVENT_TYPES = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'user.created',
  'user.updated',
  'user.deleted',
  'order.created',
  'order.updated',
  'order.deleted',
] as const

/** A type the service records when something changes in your account. */
export type RecordedEventType = (typeof EVENT_TYPES)[number]

/** What an event is about; `webhook.test` only ever reaches a webhook endpoint. */
export type EventType = RecordedEventType | 'webhook.test' | (string & {})

/**
 * One change in your account: the same JSON is a webhook's body and an SSE message's `data`.
 * `data.object` is the resource as v1 shows it (after the change; as it was, for `*.deleted`),
 * `data.previous_attributes` the fields an update changed, with their old values.
 */
export interface Event<T extends Record<string, unknown> = Record<string, unknown>> {
  id: string
  object: 'event'
  type: EventType
  created_at: string
  data: { object: T; previous_attributes?: Record<string, unknown> }
}

export type EventListParams = {
  limit?: number
  starting_after?: string
  ending_before?: string
  /** Exact types or prefix wildcards (`pet.*`); several match any of them. */
  type?: string | readonly string[]
  /** Only events about this object (a pet id or a `usr_` id). */
  object_id?: string | number
  /** ISO 8601 or Unix seconds. */
  'created[gte]'?: string | number
  'created[lte]'?: string | number
}

/** The stream takes the list's filters, without the cursor. */
export type EventStreamParams = Omit<EventListParams, 'limit' | 'starting_after' | 'ending_before'>

export type WebhookEndpointStatus = 'enabled' | 'disabled'

/** Where events are POSTed. `secret` is only in the answers of create and rotateSecret. */
export interface WebhookEndpoint {
  id: string
  object: 'webhook_endpoint'
  url: string
  /** Event types, prefix wildcards (`pet.*`), or `["*"]` for all. */
  enabled_events: string[]
  description: string | null
  status: WebhookEndpointStatus
  /** Why the service disabled it (after failing for days), or null. */
  disabled_reason: string | null
  created_at: string
  updated_at: string
}

/** An endpoint as create and rotateSecret answer: with its signing secret (`whsec_…`), shown once. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string
}

export type WebhookEndpointCreateParams = {
  url: string
  enabled_events: readonly string[]
  description?: string | null
}

export type WebhookEndpointUpdateParams = {
  url?: string
  enabled_events?: readonly string[]
  description?: string | null
  status?: WebhookEndpointStatus
}

export type WebhookEndpointListParams = {
  limit?: number
  starting_after?: string
  ending_before?: string
}

export interface DeletedWebhookEndpoint {
  id: string
  object: 'webhook_endpoint'
  deleted: true
}

export type RotateSecretParams = {
  /** How long the current secret keeps signing alongside the new one. Default 24; 0 = now. */
  expire_current_in_hours?: number
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'retrying'

/** One attempt to deliver one event to one endpoint. */
export interface WebhookDelivery {
  id: string
  object: 'webhook_delivery'
  endpoint_id: string
  event_id: string
  event_type: string
  attempt: number
  status: WebhookDeliveryStatus
  attempted_at: string | null
  response_status: number | null
  latency_ms: number | null
  /** The first KiB of the receiver's answer. */
  response_body_excerpt: string | null
  error: string | null
  next_attempt_at: string | null
}

export type WebhookDeliveryListParams = {
  limit?: number
  starting_after?: string
  ending_before?: string
  event_id?: string
  status?: WebhookDeliveryStatus
}

/** What resend and sendTest answer (202): the delivery is queued; the log shows its attempts. */
export interface QueuedWebhookDelivery {
  object: 'webhook_delivery_request'
  endpoint_id: string
  event_id: string
  status: 'pending'
}
