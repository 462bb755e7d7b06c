import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import {
  ClientInputError,
  createClient,
  createPublicClient,
  findClient,
  listClientsOfAccount,
  removeClient,
  rotateClientSecret,
  toClientInfo,
} from '../../oauth/clients-service.ts'
import { grantsOfAccount, revokeGrantOfAccount } from '../../oauth/grants-service.ts'
import type { OAuthServer } from '../../oauth/oauth-server.ts'
import { baseUrlOf, csrfToken, field, noticeFrom, pickedScopes, sendPage, sessionOf } from '../context.ts'
import {
  type ClientView,
  clientSecretPage,
  clientsPage,
  confirmClientPage,
  type GrantView,
  oauthUnavailablePage,
  publicClientPage,
} from '../views/clients-views.ts'

/**
 * OAuth apps: the account's own clients (create, rotate the secret, delete) and the grants the
 * account holder gave other apps through /oauth/authorize (each revocable). Clients and grants
 * live in the OAuth server's tables (src/oauth); this file only presents them.
 */
export function clientsRoutes(oauth: OAuthServer | undefined) {
  return async (app: FastifyInstance): Promise<void> => {
    const db = app.deps.db

    async function ownClient(request: FastifyRequest): Promise<ClientView> {
      const { id } = request.params as { id: string }
      const row = await findClient(db, id.slice(0, 100))
      if (row === undefined || row.account_id !== sessionOf(request).accountId) {
        throw new ApiError('not_found', 'There is no such OAuth app in your account.')
      }
      return toClientInfo(row)
    }

    async function grantsOf(accountId: string): Promise<GrantView[]> {
      const grants = await grantsOfAccount(db, accountId)
      const names = new Map<string, string>()
      const views: GrantView[] = []
      for (const g of grants) {
        if (!names.has(g.clientId)) {
          names.set(g.clientId, (await findClient(db, g.clientId))?.name ?? g.clientId)
        }
        views.push({ ...g, clientName: names.get(g.clientId) ?? g.clientId })
      }
      return views
    }

    async function listPage(
      request: FastifyRequest,
      status = 200,
      extra: Partial<Parameters<typeof clientsPage>[0]> = {},
    ) {
      const session = sessionOf(request)
      const [clients, grants] = await Promise.all([
        listClientsOfAccount(db, session.accountId),
        grantsOf(session.accountId),
      ])
      return { status, clients, grants, session, extra }
    }

    app.get('/clients', async (request, reply) => {
      if (oauth === undefined) {
        return sendPage(
          reply,
          oauthUnavailablePage({ csrf: csrfToken(reply), email: sessionOf(request).email }),
        )
      }
      const { clients, grants, session } = await listPage(request)
      return sendPage(
        reply,
        clientsPage({
          csrf: csrfToken(reply),
          email: session.email,
          clients,
          grants,
          notice: noticeFrom(request),
        }),
      )
    })

    app.post('/clients', { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = sessionOf(request)
      const name = field(request.body, 'name').trim().slice(0, 100)
      const redirectText = field(request.body, 'redirect_uris').slice(0, 10_000)
      const scopes = pickedScopes(request.body)
      const isPublic = field(request.body, 'public') === '1'
      const redirectUris = redirectText
        .split(/[\r\n]+/)
        .map((u) => u.trim())
        .filter((u) => u !== '')
      const again = async (text: string, failed: string) => {
        const { clients, grants } = await listPage(request)
        return sendPage(
          reply,
          clientsPage({
            csrf: csrfToken(reply),
            email: session.email,
            clients,
            grants,
            notice: { kind: 'error', text },
            values: { name, redirectUris: redirectText, scopes, isPublic, failed },
          }),
          400,
        )
      }
      if (name === '')
        return again('Give the app a name: account holders see it when it asks for access.', 'name')
      if (scopes.length === 0) return again('Tick at least one scope the app may ask for.', 'scopes')
      if (redirectUris.length > 10) return again('Give at most 10 redirect URIs.', 'redirect_uris')
      const input = { accountId: session.accountId, name, scopes, redirectUris }
      try {
        if (isPublic) {
          const { info } = await createPublicClient(db, input)
          return sendPage(
            reply,
            publicClientPage({
              csrf: csrfToken(reply),
              email: session.email,
              client: info,
              baseUrl: baseUrlOf(request),
            }),
          )
        }
        const { clientSecret, info } = await createClient(db, input)
        return sendPage(
          reply,
          clientSecretPage({
            csrf: csrfToken(reply),
            email: session.email,
            client: info,
            secret: clientSecret,
            baseUrl: baseUrlOf(request),
            rotated: false,
          }),
        )
      } catch (error) {
        // Every ClientInputError is about a redirect URI.
        if (error instanceof ClientInputError) return again(error.message, 'redirect_uris')
        throw error
      }
    })

    for (const action of ['rotate', 'delete'] as const) {
      app.get(`/clients/:id/${action}`, async (request, reply) => {
        const client = await ownClient(request)
        if (action === 'rotate' && client.client_type === 'public') {
          throw new ApiError('not_found', 'A public app has no secret to rotate.')
        }
        return sendPage(
          reply,
          confirmClientPage({ csrf: csrfToken(reply), email: sessionOf(request).email, client, action }),
        )
      })
    }

    app.post('/clients/:id/rotate', { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = sessionOf(request)
      const client = await ownClient(request)
      const secret = await rotateClientSecret(db, session.accountId, client.client_id)
      if (secret === undefined) throw new ApiError('not_found', 'There is no such OAuth app in your account.')
      return sendPage(
        reply,
        clientSecretPage({
          csrf: csrfToken(reply),
          email: session.email,
          client,
          secret,
          baseUrl: baseUrlOf(request),
          rotated: true,
        }),
      )
    })

    app.post('/clients/:id/delete', { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = sessionOf(request)
      const client = await ownClient(request)
      await removeClient(db, client.client_id, {
        accountId: session.accountId,
        ...(oauth === undefined ? {} : { onDeleted: (id: string) => oauth.clientDeleted(id) }),
      })
      return reply.redirect('/dashboard/clients?notice=client_deleted', 303)
    })

    app.post('/authorisations/:id/revoke', { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = sessionOf(request)
      const { id } = request.params as { id: string }
      if (oauth === undefined || !(await revokeGrantOfAccount(db, oauth.provider, session.accountId, id))) {
        throw new ApiError('not_found', 'There is no such authorisation in your account.')
      }
      return reply.redirect('/dashboard/clients?notice=grant_revoked', 303)
    })
  }
}
