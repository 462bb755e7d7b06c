import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { findEvent, lastEventSeq } from '../events/events-service.ts'
import { newId, newTimeOrderedId } from '../lib/ids.ts'
import type { Clock } from './clock.ts'
import { eventPayload, testEventPayload } from './event-payload.ts'
import type { SecretBox } from './secret-box.ts'
import { newWebhookSecret } from './signing.ts'
import { type Resolve, UrlRefused, vetUrl } from './url-policy.ts'
import {
  type EndpointRow,
  TEST_EVENT_TYPE,
  toDeliveryV1,
  toEndpointV1,
  unknownEventPatterns,
  type WebhookDeliveryV1,
  type WebhookEndpointV1,
} from './webhook-endpoint.ts'
import * as repo from './webhooks-repository.ts'

/** What the webhooks service needs besides the database: its key, URL policy, clock and limit. */
export interface WebhooksContext {
  box: SecretBox
  insecure: boolean
  resolve: Resolve
  clock: Clock
  /** Webhook endpoints one account may have (WEBHOOKS_ENDPOINTS_PER_ACCOUNT). */
  endpointsPerAccount: number
}

export interface EndpointInput {
  url?: string
  enabled_events?: string[]
  description?: string | null
  status?: 'enabled' | 'disabled'
}

async function checkUrl(ctx: WebhooksContext, url: string): Promise<void> {
  try {
    await vetUrl(url, { insecure: ctx.insecure, resolve: ctx.resolve })
  } catch (error) {
    if (error instanceof UrlRefused)
      throw new ApiError('webhook_url_refused', error.message, { param: 'url' })
    throw error
  }
}

function checkEvents(enabledEvents: string[]): string[] {
  const unknown = unknownEventPatterns(enabledEvents)
  if (unknown.length > 0) {
    throw new ApiError(
      'parameter_invalid',
      `enabled_events names unknown event types: ${unknown.join(', ')}. Use event types such as pet.created, a resource wildcard such as pet.*, or * for every event.`,
      { param: 'enabled_events' },
    )
  }
  return [...new Set(enabledEvents)]
}

function notFound(id: string): ApiError {
  return new ApiError('webhook_endpoint_not_found', `No webhook endpoint ${id} in your account.`)
}

export async function createEndpoint(
  db: Db,
  ctx: WebhooksContext,
  accountId: string,
  input: Required<Pick<EndpointInput, 'url' | 'enabled_events'>> & EndpointInput,
): Promise<WebhookEndpointV1> {
  const enabledEvents = checkEvents(input.enabled_events)
  await checkUrl(ctx, input.url)
  const secret = newWebhookSecret()
  const at = new Date(ctx.clock.now()).toISOString()
  // Counted and inserted with the account's endpoints locked, so that creates sent at once
  // cannot pass the limit together. Each endpoint multiplies every event into a delivery.
  const row = await db.transaction().execute(async (trx) => {
    await repo.lockEndpointsOfAccount(trx, accountId)
    const count = await repo.countEndpoints(trx, accountId)
    if (count >= ctx.endpointsPerAccount) {
      throw new ApiError(
        'webhook_endpoint_limit',
        `Your account already has ${count} webhook endpoints, the most it may. Delete one you no longer use (DELETE /v1/webhook_endpoint/{id}), or subscribe an existing one to more events with enabled_events.`,
      )
    }
    return repo.insertEndpoint(trx, {
      id: newId('we'),
      account_id: accountId,
      url: input.url,
      enabled_events: JSON.stringify(enabledEvents),
      description: input.description ?? null,
      status: input.status ?? 'enabled',
      disabled_reason: null,
      secret_encrypted: ctx.box.encrypt(secret),
      previous_secret_encrypted: null,
      previous_secret_expires_at: null,
      failing_since: null,
      created_at: at,
      updated_at: at,
    })
  })
  return { ...toEndpointV1(row), secret }
}

export async function getEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow> {
  const row = await repo.findEndpoint(db, accountId, id)
  if (row === undefined) throw notFound(id)
  return row
}

export async function listEndpoints(
  db: Db,
  accountId: string,
  page: repo.Page,
): Promise<{ data: WebhookEndpointV1[]; hasMore: boolean }> {
  const result = await repo.listEndpoints(db, accountId, page)
  if (result === undefined) throw invalidCursor(page)
  return { data: result.rows.map(toEndpointV1), hasMore: result.hasMore }
}

function invalidCursor(page: repo.Page): ApiError {
  const param = page.endingBefore === undefined ? 'starting_after' : 'ending_before'
  return new ApiError('invalid_cursor', `${param} does not name an object of this list.`, { param })
}

/**
 * Changes an endpoint; enabling it again clears the reason it was disabled and its failure run,
 * and makes the deliveries held while it was disabled due at once.
 */
export async function updateEndpoint(
  db: Db,
  ctx: WebhooksContext,
  accountId: string,
  id: string,
  input: EndpointInput,
): Promise<WebhookEndpointV1> {
  const enabledEvents = input.enabled_events === undefined ? undefined : checkEvents(input.enabled_events)
  if (input.url !== undefined) await checkUrl(ctx, input.url)
  const now = new Date(ctx.clock.now()).toISOString()
  return db.transaction().execute(async (trx) => {
    const current = await repo.findEndpointForUpdate(trx, accountId, id)
    if (current === undefined) throw notFound(id)
    if (input.status !== undefined && input.status !== current.status) {
      if (input.status === 'disabled') await repo.holdDeliveries(trx, id)
      else await repo.resumeDeliveries(trx, id, now)
    }
    const row = await repo.updateEndpointRow(trx, id, {
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(enabledEvents === undefined ? {} : { enabled_events: JSON.stringify(enabledEvents) }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.status === undefined || input.status === current.status
        ? {}
        : input.status === 'enabled'
          ? { status: 'enabled' as const, disabled_reason: null, failing_since: null }
          : { status: 'disabled' as const, disabled_reason: 'Disabled by the account holder.' }),
      updated_at: now,
    })
    return toEndpointV1(row)
  })
}

export async function deleteEndpoint(db: Db, accountId: string, id: string): Promise<void> {
  if (!(await repo.deleteEndpointRow(db, accountId, id))) throw notFound(id)
}

/**
 * A new signing secret; the current one keeps signing alongside it for `expireCurrentInHours`
 * (0: it stops at once), so receivers can switch without missing a delivery.
 */
export async function rotateSecret(
  db: Db,
  ctx: WebhooksContext,
  accountId: string,
  id: string,
  expireCurrentInHours: number,
): Promise<WebhookEndpointV1> {
  const secret = newWebhookSecret()
  const now = ctx.clock.now()
  return db.transaction().execute(async (trx) => {
    const current = await repo.findEndpointForUpdate(trx, accountId, id)
    if (current === undefined) throw notFound(id)
    const row = await repo.updateEndpointRow(trx, id, {
      secret_encrypted: ctx.box.encrypt(secret),
      previous_secret_encrypted: expireCurrentInHours === 0 ? null : current.secret_encrypted,
      previous_secret_expires_at:
        expireCurrentInHours === 0 ? null : new Date(now + expireCurrentInHours * 3_600_000).toISOString(),
      updated_at: new Date(now).toISOString(),
    })
    return { ...toEndpointV1(row), secret }
  })
}

/** The secrets that sign a delivery now: the current one, and the previous one until it expires. */
export function signingSecrets(box: SecretBox, row: EndpointRow, now: number): string[] {
  const secrets = [box.decrypt(row.secret_encrypted)]
  if (
    row.previous_secret_encrypted !== null &&
    row.previous_secret_expires_at !== null &&
    Date.parse(row.previous_secret_expires_at) > now
  ) {
    secrets.push(box.decrypt(row.previous_secret_encrypted))
  }
  return secrets
}

export async function listDeliveries(
  db: Db,
  accountId: string,
  endpointId: string,
  filters: { eventId?: string; status?: string },
  page: repo.Page,
): Promise<{ data: WebhookDeliveryV1[]; hasMore: boolean }> {
  await getEndpoint(db, accountId, endpointId)
  const result = await repo.listAttempts(db, accountId, endpointId, filters, page)
  if (result === undefined) throw invalidCursor(page)
  return { data: result.rows.map(toDeliveryV1), hasMore: result.hasMore }
}

/** When a new delivery to this endpoint is due: at once, or once it is enabled again (holdDeliveries). */
function firstDueTime(endpoint: EndpointRow, at: string): string | null {
  return endpoint.status === 'enabled' ? at : null
}

/** Queues one event again for one endpoint (whatever its subscriptions); the worker sends it. */
export async function resend(
  db: Db,
  ctx: WebhooksContext,
  accountId: string,
  endpointId: string,
  eventId: string,
): Promise<void> {
  const endpoint = await getEndpoint(db, accountId, endpointId)
  const event = await findEvent(db, accountId, eventId)
  if (event === undefined)
    throw new ApiError('event_not_found', `No event ${eventId} in your account.`, { param: 'event_id' })
  const at = new Date(ctx.clock.now()).toISOString()
  await repo.insertDeliveries(db, [
    {
      id: newId('dlv'),
      endpoint_id: endpointId,
      account_id: accountId,
      event_id: event.id,
      event_seq: event.seq,
      event_type: event.type,
      object_id: event.object_id,
      payload: eventPayload(event),
      dedupe_key: null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: firstDueTime(endpoint, at),
      locked_until: null,
      created_at: at,
      updated_at: at,
    },
  ])
}

/** Queues a `webhook.test` event (the endpoint itself as `data.object`) for this endpoint only. */
export async function sendTestEvent(
  db: Db,
  ctx: WebhooksContext,
  accountId: string,
  endpointId: string,
): Promise<string> {
  const endpoint = await getEndpoint(db, accountId, endpointId)
  const now = ctx.clock.now()
  const at = new Date(now).toISOString()
  const eventId = newTimeOrderedId('evt', now)
  await repo.insertDeliveries(db, [
    {
      id: newId('dlv'),
      endpoint_id: endpointId,
      account_id: accountId,
      event_id: eventId,
      event_seq: 0,
      event_type: TEST_EVENT_TYPE,
      object_id: endpointId,
      payload: testEventPayload(eventId, at, toEndpointV1(endpoint)),
      dedupe_key: null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: firstDueTime(endpoint, at),
      locked_until: null,
      created_at: at,
      updated_at: at,
    },
  ])
  return eventId
}

// The delivery log's retention, run with the events' (src/events/events-retention.ts, src/server.ts).
/** For a sandbox's reset: its endpoints stay, with their secrets. */
export { deleteAllDeliveriesOfAccount, purgeFinishedDeliveriesBefore } from './webhooks-repository.ts'

/**
 * What waits to be delivered, all accounts together (the metrics' gauges): open deliveries, the
 * earliest due time of the first `endpoints` endpoints with open deliveries, and the events not
 * yet fanned out (seq numbers past the fan-out cursor: an estimate, holes included).
 */
export async function deliveryBacklog(
  db: Db,
  endpoints: number,
): Promise<{ open: number; oldestDueAt: string | null; eventsWaiting: number }> {
  const { open, oldestDueAt, fanOutCursor } = await repo.deliveryBacklog(db, endpoints)
  const waiting = fanOutCursor === undefined ? 0 : (await lastEventSeq(db)) - fanOutCursor
  return { open, oldestDueAt, eventsWaiting: Math.max(0, waiting) }
}
