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
  // Built from the stored JSON as text (written by JSON.stringify, so the same bytes that
  // JSON.stringify of the parsed value gives): no parse and no stringify per delivery.
  const previous = row.type.endsWith('.updated')
    ? `,"previous_attributes":${row.previous_attributes ?? '{}'}`
    : ''
  return `{"id":${JSON.stringify(row.id)},"object":"event","type":${JSON.stringify(row.type)},"created_at":${JSON.stringify(row.created_at)},"data":{"object":${row.data}${previous}}}`
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
