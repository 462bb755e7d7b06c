import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { toEndpointV1 } from '../../webhooks/webhook-endpoint.ts'
import {
  createEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  resend,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from '../../webhooks/webhooks-service.ts'
import { csrfToken, field, fields, noticeFrom, sendPage, sessionOf } from '../context.ts'
import {
  EVENT_CHOICES,
  ROTATE_CHOICES,
  webhookPage,
  webhookSecretPage,
  webhooksPage,
} from '../views/webhooks-views.ts'

/** Webhook endpoints: list, add (the secret shown once), one endpoint with its delivery log and actions. */
export async function webhooksRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.deps
  const ctx = () => app.deps.webhooks
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id.slice(0, 64)

  const allEndpoints = async (accountId: string) => (await listEndpoints(db, accountId, { limit: 100 })).data

  app.get('/webhooks', async (request, reply) => {
    const session = sessionOf(request)
    return sendPage(
      reply,
      webhooksPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        endpoints: await allEndpoints(session.accountId),
      }),
    )
  })

  app.post('/webhooks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    const url = field(request.body, 'url').trim().slice(0, 2048)
    const events = fields(request.body, 'enabled_events').filter((e) => EVENT_CHOICES.includes(e))
    const description = field(request.body, 'description').trim().slice(0, 200)
    try {
      if (events.length === 0) {
        throw new ApiError(
          'parameter_invalid',
          'Tick at least one event to send: an endpoint that receives nothing is of no use.',
          { param: 'enabled_events' },
        )
      }
      const endpoint = await createEndpoint(db, ctx(), session.accountId, {
        url,
        enabled_events: events,
        description: description === '' ? null : description,
      })
      // The secret is on this page only.
      return sendPage(reply, webhookSecretPage({ csrf: csrfToken(reply), email: session.email, endpoint }))
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error
      return sendPage(
        reply,
        webhooksPage({
          csrf: csrfToken(reply),
          email: session.email,
          notice: { kind: 'error', text: error.detail },
          endpoints: await allEndpoints(session.accountId),
          values: { url, events, description, failed: error.options.param },
        }),
        400,
      )
    }
  })

  app.get('/webhooks/:id', async (request, reply) => {
    const session = sessionOf(request)
    const endpoint = toEndpointV1(await getEndpoint(db, session.accountId, idOf(request)))
    const deliveries = await listDeliveries(db, session.accountId, endpoint.id, {}, { limit: 50 })
    return sendPage(
      reply,
      webhookPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        endpoint,
        deliveries: deliveries.data,
      }),
    )
  })

  app.post('/webhooks/:id/test', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = idOf(request)
    await sendTestEvent(db, ctx(), sessionOf(request).accountId, id)
    return reply.redirect(`/dashboard/webhooks/${id}?notice=webhook_test_sent`, 303)
  })

  app.post('/webhooks/:id/resend', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = idOf(request)
    await resend(db, ctx(), sessionOf(request).accountId, id, field(request.body, 'event_id').slice(0, 64))
    return reply.redirect(`/dashboard/webhooks/${id}?notice=webhook_resent`, 303)
  })

  app.post('/webhooks/:id/status', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = idOf(request)
    const status = field(request.body, 'status') === 'enabled' ? 'enabled' : 'disabled'
    await updateEndpoint(db, ctx(), sessionOf(request).accountId, id, { status })
    return reply.redirect(`/dashboard/webhooks/${id}?notice=webhook_${status}`, 303)
  })

  app.post('/webhooks/:id/rotate', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    const choice =
      ROTATE_CHOICES.find((c) => c.value === field(request.body, 'expire_current_in_hours')) ??
      ROTATE_CHOICES[2]!
    const endpoint = await rotateSecret(db, ctx(), session.accountId, idOf(request), choice.hours)
    return sendPage(
      reply,
      webhookSecretPage({
        csrf: csrfToken(reply),
        email: session.email,
        endpoint,
        rotated:
          choice.hours === 0
            ? 'The previous secret no longer signs deliveries.'
            : `The previous secret keeps signing deliveries too for ${choice.label.toLowerCase().replace(/^in /, '')}, so you can deploy the new one first.`,
      }),
    )
  })
}
