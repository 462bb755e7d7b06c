import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { assertOneCursor } from '../../http/replies.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'
import { toEndpointV1 } from '../../webhooks/webhook-endpoint.ts'
import {
  CreateWebhookEndpointBody,
  DeletedWebhookEndpointSchema,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  QueuedDeliverySchema,
  ResendBody,
  RotateSecretBody,
  UpdateWebhookEndpointBody,
  WebhookDeliveryListSchema,
  WebhookEndpointIdParams,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from '../../webhooks/webhook-schemas.ts'
import * as webhooks from '../../webhooks/webhooks-service.ts'

const tags = ['v1-webhook']
const security = API_KEY_SECURITY

/**
 * Form bodies carry text and repeated keys: `enabled_events[]=a&enabled_events[]=b`, repeated
 * `enabled_events`, or one comma-separated value all become an array; whole numbers become numbers.
 */
function normaliseForm(request: FastifyRequest): void {
  if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) return
  const body = request.body as Record<string, unknown> | undefined
  if (body === undefined || body === null || typeof body !== 'object') return
  if ('enabled_events[]' in body) {
    const bracketed = body['enabled_events[]']
    delete body['enabled_events[]']
    body.enabled_events = [body.enabled_events ?? [], bracketed ?? []].flat()
  }
  if (typeof body.enabled_events === 'string') {
    body.enabled_events = body.enabled_events
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  }
  if (body.description === '') body.description = null
  const hours = body.expire_current_in_hours
  if (typeof hours === 'string' && /^\d+$/.test(hours)) body.expire_current_in_hours = Number(hours)
}

function page(q: { limit: number; starting_after?: string | undefined; ending_before?: string | undefined }) {
  assertOneCursor(q.starting_after, q.ending_before)
  return {
    limit: q.limit,
    ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
    ...(q.ending_before === undefined ? {} : { endingBefore: q.ending_before }),
  }
}

/** The webhook endpoints API (README, Webhooks): CRUD, secret rotation, the delivery log, resend, test. */
export async function v1WebhookEndpointRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, webhooks: ctx } = app.deps
  app.addHook('preValidation', async (request) => normaliseForm(request))

  app.post(
    '/webhook_endpoint',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'The answer carries the signing `secret`, shown this once. An account may have `WEBHOOKS_ENDPOINTS_PER_ACCOUNT` endpoints (16 by default); one more answers 409 `webhook_endpoint_limit`.',
        tags,
        security,
        body: CreateWebhookEndpointBody,
        response: { 201: WebhookEndpointSchema, ...problemResponses(409, 413, 415) },
      },
    },
    async (request, reply) => {
      const endpoint = await webhooks.createEndpoint(db, ctx, request.principal!.accountId, request.body)
      return reply.code(201).header('location', `/v1/webhook_endpoint/${endpoint.id}`).send(endpoint)
    },
  )

  app.get(
    '/webhook_endpoint',
    {
      config: { scope: 'read:webhooks' },
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints, newest first',
        tags,
        security,
        querystring: ListEndpointsQuery,
        response: { 200: WebhookEndpointListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const result = await webhooks.listEndpoints(db, request.principal!.accountId, page(request.query))
      return {
        object: 'list' as const,
        data: result.data,
        has_more: result.hasMore,
        url: '/v1/webhook_endpoint',
      }
    },
  )

  app.get(
    '/webhook_endpoint/:id',
    {
      config: { scope: 'read:webhooks' },
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        tags,
        security,
        params: WebhookEndpointIdParams,
        response: { 200: WebhookEndpointSchema, ...problemResponses(404) },
      },
    },
    async (request) =>
      toEndpointV1(await webhooks.getEndpoint(db, request.principal!.accountId, request.params.id)),
  )

  app.patch(
    '/webhook_endpoint/:id',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint (url, enabled_events, description, status)',
        tags,
        security,
        params: WebhookEndpointIdParams,
        body: UpdateWebhookEndpointBody,
        response: { 200: WebhookEndpointSchema, ...problemResponses(404, 413, 415) },
      },
    },
    async (request) =>
      webhooks.updateEndpoint(db, ctx, request.principal!.accountId, request.params.id, request.body),
  )

  app.delete(
    '/webhook_endpoint/:id',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint (its pending deliveries and log with it)',
        tags,
        security,
        params: WebhookEndpointIdParams,
        response: {
          200: DeletedWebhookEndpointSchema,
          ...problemResponses(404),
        },
      },
    },
    async (request) => {
      await webhooks.deleteEndpoint(db, request.principal!.accountId, request.params.id)
      return { id: request.params.id, object: 'webhook_endpoint' as const, deleted: true as const }
    },
  )

  app.post(
    '/webhook_endpoint/:id/rotate_secret',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Replace the signing secret; the current one keeps signing for a while',
        tags,
        security,
        params: WebhookEndpointIdParams,
        body: RotateSecretBody,
        response: { 200: WebhookEndpointSchema, ...problemResponses(404, 413, 415) },
      },
    },
    async (request) =>
      webhooks.rotateSecret(
        db,
        ctx,
        request.principal!.accountId,
        request.params.id,
        request.body?.expire_current_in_hours ?? 24,
      ),
  )

  app.get(
    '/webhook_endpoint/:id/delivery',
    {
      config: { scope: 'read:webhooks' },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery log of an endpoint: every attempt, newest first',
        tags,
        security,
        params: WebhookEndpointIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: WebhookDeliveryListSchema, ...problemResponses(404) },
      },
    },
    async (request) => {
      const q = request.query
      const result = await webhooks.listDeliveries(
        db,
        request.principal!.accountId,
        request.params.id,
        {
          ...(q.event_id === undefined ? {} : { eventId: q.event_id }),
          ...(q.status === undefined ? {} : { status: q.status }),
        },
        page(q),
      )
      return {
        object: 'list' as const,
        data: result.data,
        has_more: result.hasMore,
        url: `/v1/webhook_endpoint/${request.params.id}/delivery`,
      }
    },
  )

  app.post(
    '/webhook_endpoint/:id/resend',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'resendWebhookEvent',
        summary: 'Send one event to this endpoint again',
        tags,
        security,
        params: WebhookEndpointIdParams,
        body: ResendBody,
        response: { 202: QueuedDeliverySchema, ...problemResponses(404, 413, 415) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      await webhooks.resend(db, ctx, request.principal!.accountId, id, request.body.event_id)
      return reply.code(202).send({
        object: 'webhook_delivery_request' as const,
        endpoint_id: id,
        event_id: request.body.event_id,
        status: 'pending' as const,
      })
    },
  )

  app.post(
    '/webhook_endpoint/:id/test',
    {
      config: { scope: 'write:webhooks' },
      schema: {
        operationId: 'sendWebhookTestEvent',
        summary: 'Send a webhook.test event to this endpoint',
        tags,
        security,
        params: WebhookEndpointIdParams,
        response: { 202: QueuedDeliverySchema, ...problemResponses(404) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const eventId = await webhooks.sendTestEvent(db, ctx, request.principal!.accountId, id)
      return reply.code(202).send({
        object: 'webhook_delivery_request' as const,
        endpoint_id: id,
        event_id: eventId,
        status: 'pending' as const,
      })
    },
  )
}
