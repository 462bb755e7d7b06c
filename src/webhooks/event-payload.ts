import type { Selectable } from 'kysely'
import type { EventsTable } from '../db/schema.ts'

/**
 * The webhook body of a stored event: the event exactly as the events API shows it
 * (`id`, `object`, `type`, `created_at`, `data.object`, and `data.previous_attributes` on
 * `*.updated`), serialised once when the delivery is created and sent byte for byte.
 */
export function eventPayload(
  row: Pick<Selectable<EventsTable>, 'id' | 'type' | 'created_at' | 'data' | 'previous_attributes'>,
): string {
  const data: { object: unknown; previous_attributes?: unknown } = { object: JSON.parse(row.data) }
  if (row.type.endsWith('.updated')) {
    data.previous_attributes = row.previous_attributes === null ? {} : JSON.parse(row.previous_attributes)
  }
  return JSON.stringify({ id: row.id, object: 'event', type: row.type, created_at: row.created_at, data })
}

/** The body of a `webhook.test` event: the endpoint it was sent to, as `data.object`. */
export function testEventPayload(id: string, at: string, endpoint: unknown): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: 'webhook.test',
    created_at: at,
    data: { object: endpoint },
  })
}
