import { Type } from '@sinclair/typebox'
import { LIMITS, Nullable, StringEnum } from '../schemas/common.ts'
import { IdCursor, ListOf, ListQuery } from '../schemas/list.ts'

const EVENT_PATTERN = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'An event type (`pet.created`), a resource wildcard (`pet.*`), or `*` for every event.',
})

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ examples: ['we_4fQk2T9ZpLm0aB7cD1eF'] }),
    object: Type.Literal('webhook_endpoint'),
    url: Type.String(),
    enabled_events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    status: StringEnum(['enabled', 'disabled'] as const),
    disabled_reason: Nullable(
      Type.String({ description: 'Why the endpoint is disabled (by you, or for failing).' }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    secret: Type.Optional(
      Type.String({
        description: 'The signing secret (`whsec_…`): only in the answers of create and rotate_secret.',
      }),
    ),
  },
  { description: 'An HTTPS URL of yours that receives signed events.' },
)

/** The answer of a delete. */
export const DeletedWebhookEndpointSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  deleted: Type.Literal(true),
})

export const WebhookEndpointListSchema = ListOf(WebhookEndpointSchema)

const Url = Type.String({
  minLength: 1,
  maxLength: LIMITS.url,
  description: 'Where events are POSTed (https).',
})
const EnabledEvents = Type.Array(EVENT_PATTERN, {
  minItems: 1,
  maxItems: 20,
  description: 'Event types to receive (form: `enabled_events[]=pet.created&enabled_events[]=user.*`).',
})
const Description = Nullable(Type.String({ maxLength: LIMITS.shortText, description: 'A note of yours.' }))

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    enabled_events: EnabledEvents,
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
)

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Description),
    status: Type.Optional(StringEnum(['enabled', 'disabled'] as const)),
  },
  { additionalProperties: false },
)

export const RotateSecretBody = Type.Object(
  {
    expire_current_in_hours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 168,
        default: 24,
        description: 'Hours the current secret keeps signing beside the new one (0: it stops now).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const ResendBody = Type.Object(
  { event_id: Type.String({ minLength: 1, maxLength: 64, description: 'The event to send again (evt_…).' }) },
  { additionalProperties: false },
)

export const WebhookEndpointIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The endpoint id (we_…).' }),
})

const Cursors = {
  starting_after: IdCursor('Last id of the previous page.'),
  ending_before: IdCursor('First id of the current page.'),
}

export const ListEndpointsQuery = ListQuery(Cursors)

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'retrying'] as const

export const ListDeliveriesQuery = ListQuery(Cursors, {
  event_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only the attempts of this event.' })),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
})

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ examples: ['wd_4fQk2T9ZpLm0aB7cD1eF'] }),
    object: Type.Literal('webhook_delivery'),
    endpoint_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    attempt: Type.Integer({ description: '1 for the first attempt of this event to this endpoint.' }),
    status: StringEnum(DELIVERY_STATUSES),
    attempted_at: Type.String({ format: 'date-time' }),
    response_status: Nullable(Type.Integer()),
    latency_ms: Nullable(Type.Integer()),
    response_body_excerpt: Nullable(Type.String({ description: 'The first 1 KiB of the answer.' })),
    error: Nullable(Type.String({ description: 'Why no answer came (timeout, refused address, …).' })),
    next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When it is tried again.' })),
  },
  { description: 'One attempt to deliver an event to an endpoint: the delivery log.' },
)

export const WebhookDeliveryListSchema = ListOf(WebhookDeliverySchema)

export const QueuedDeliverySchema = Type.Object(
  {
    object: Type.Literal('webhook_delivery_request'),
    endpoint_id: Type.String(),
    event_id: Type.String(),
    status: Type.Literal('pending'),
  },
  { description: 'The event is queued for this endpoint; its attempts appear in the delivery log.' },
)
