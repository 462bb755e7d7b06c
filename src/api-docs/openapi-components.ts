import type { TSchema } from '@sinclair/typebox'
import { EventListSchema, EventV1Schema } from '../events/event-schemas.ts'
import { RequestLogListSchema, RequestLogV1Schema } from '../request-logs/request-log-schemas.ts'
import { AccountV1Schema } from '../routes/v1/account.ts'
import { DeletedOrderSchema, OrderListSchema, OrderV1Schema } from '../routes/v1/order-schemas.ts'
import { CategorySchema, DeletedPetSchema, PetListSchema, PetV1Schema } from '../routes/v1/pet-schemas.ts'
import { DeletedUserSchema, UserListSchema, UserV1Schema } from '../routes/v1/user-schemas.ts'
import {
  DeletedWebhookEndpointSchema,
  QueuedDeliverySchema,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from '../webhooks/webhook-schemas.ts'

/**
 * The v1 objects, by the name a generated SDK gives their type. A new v1 object goes here too.
 * (The v2 schemas are named already: the Petstore's `Pet`, `User`, … registered with `$id`.)
 */
export const V1_COMPONENTS: Record<string, TSchema> = {
  PetV1: PetV1Schema,
  PetListV1: PetListSchema,
  DeletedPetV1: DeletedPetSchema,
  CategoryV1: CategorySchema,
  UserV1: UserV1Schema,
  UserListV1: UserListSchema,
  DeletedUserV1: DeletedUserSchema,
  OrderV1: OrderV1Schema,
  OrderListV1: OrderListSchema,
  DeletedOrderV1: DeletedOrderSchema,
  EventV1: EventV1Schema,
  EventListV1: EventListSchema,
  WebhookEndpoint: WebhookEndpointSchema,
  WebhookEndpointList: WebhookEndpointListSchema,
  DeletedWebhookEndpoint: DeletedWebhookEndpointSchema,
  WebhookDelivery: WebhookDeliverySchema,
  WebhookDeliveryList: WebhookDeliveryListSchema,
  QueuedWebhookDelivery: QueuedDeliverySchema,
  RequestLog: RequestLogV1Schema,
  RequestLogList: RequestLogListSchema,
  AccountV1: AccountV1Schema,
}

type Json = unknown

/**
 * Names the v1 objects in the document: each copy of one of `named` that @fastify/swagger wrote
 * inline (in an operation, or inside another named object) becomes a `$ref` to
 * `#/components/schemas/{name}`. The route schemas stay as they are (validation and serialisation
 * use them directly, typed by `Static<>`); only the document changes. A copy is recognised by its
 * JSON, keys in any order, as @fastify/swagger writes it (asDocumentWrites).
 */
export function nameComponents(
  document: Record<string, Json>,
  named: Record<string, TSchema>,
): Record<string, Json> {
  const byShape = new Map<string, string>()
  const bodies: Record<string, Json> = {}
  for (const [name, schema] of Object.entries(named)) {
    const body = asDocumentWrites(JSON.parse(JSON.stringify(schema)) as Json)
    byShape.set(canonical(body), name)
    bodies[name] = body
  }
  const refer = (node: Json, isRoot: boolean): Json => {
    if (Array.isArray(node)) return node.map((item) => refer(item, false))
    if (node === null || typeof node !== 'object') return node
    const name = isRoot ? undefined : byShape.get(canonical(node))
    if (name !== undefined) return { $ref: `#/components/schemas/${name}` }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, refer(value, false)]))
  }
  const components = (document.components ?? {}) as Record<string, Json>
  const schemas = (components.schemas ?? {}) as Record<string, Json>
  const namedBodies = Object.fromEntries(
    Object.entries(bodies).map(([name, body]) => [name, refer(body, true)]),
  )
  return {
    ...document,
    paths: refer(document.paths, true),
    components: { ...components, schemas: { ...schemas, ...namedBodies } },
  }
}

/** A schema as @fastify/swagger writes it into an OpenAPI 3 document: `const: x` as `enum: [x]`. */
function asDocumentWrites(node: Json): Json {
  if (Array.isArray(node)) return node.map(asDocumentWrites)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'const') out.enum = [value]
    else out[key] = asDocumentWrites(value)
  }
  return out
}

/** JSON with object keys sorted, so two copies of one schema compare equal. */
function canonical(node: Json): string {
  return JSON.stringify(node, (_key, value: Json) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  )
}
