import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ALL_SCOPES, type Scope } from '../../access/scopes.ts'
import { ApiError } from '../../errors/api-error.ts'
import {
  type ApiKeyInfo,
  createApiKey,
  expireApiKeyAt,
  findApiKeyById,
  listApiKeys,
  toApiKeyInfo,
} from '../../keys/keys-service.ts'
import { nowIso } from '../../lib/time.ts'
import { baseUrlOf, csrfToken, field, noticeFrom, pickedScopes, sendPage, sessionOf } from '../context.ts'
import {
  EXPIRY_CHOICES,
  keyState,
  keysPage,
  newKeyPage,
  ROLL_CHOICES,
  revokeKeyPage,
  rollKeyPage,
} from '../views/keys-views.ts'

/** Create, list, revoke and roll API keys. */
export async function keysRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  /** The account's key with this id; 404 for another account's key as for a missing one. */
  async function ownKey(request: FastifyRequest): Promise<ApiKeyInfo> {
    const { id } = request.params as { id: string }
    const row = await findApiKeyById(db, id)
    if (row === undefined || row.account_id !== sessionOf(request).accountId) {
      throw new ApiError('not_found', 'There is no such API key in your account.')
    }
    return toApiKeyInfo(row)
  }

  app.get('/keys', async (request, reply) => {
    const session = sessionOf(request)
    const keys = (await listApiKeys(db, session.accountId)).map(toApiKeyInfo)
    return sendPage(
      reply,
      keysPage({ csrf: csrfToken(reply), email: session.email, keys, notice: noticeFrom(request) }),
    )
  })

  app.post('/keys', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    const name = field(request.body, 'name').trim().slice(0, 100)
    const expiry = field(request.body, 'expiry') || 'never'
    const picked = pickedScopes(request.body)
    const choice = EXPIRY_CHOICES.find((c) => c.value === expiry)
    const problem =
      choice === undefined
        ? 'Choose when the key expires from the list.'
        : picked.length === 0
          ? 'Tick at least one permission: a key that may do nothing is of no use.'
          : undefined
    if (problem !== undefined) {
      const keys = (await listApiKeys(db, session.accountId)).map(toApiKeyInfo)
      return sendPage(
        reply,
        keysPage({
          csrf: csrfToken(reply),
          email: session.email,
          keys,
          notice: { kind: 'error', text: problem },
          values: { name, expiry, scopes: picked, failed: choice === undefined ? 'expiry' : 'scopes' },
        }),
        400,
      )
    }
    // Every scope ticked means an unrestricted key (it will also get scopes added later).
    const scopes: Scope[] | null = ALL_SCOPES.every((s) => picked.includes(s)) ? null : picked
    const days = choice?.days ?? null
    const { apiKey, info } = await createApiKey(db, {
      accountId: session.accountId,
      name: name || 'Secret key',
      scopes,
      expiresAt: days === null ? null : new Date(Date.now() + days * 86_400_000),
    })
    // The secret is on this page only: never cache it anywhere.
    return sendPage(
      reply,
      newKeyPage({ csrf: csrfToken(reply), email: session.email, apiKey, info, baseUrl: baseUrlOf(request) }),
    )
  })

  app.get('/keys/:id/revoke', async (request, reply) => {
    const key = await ownKey(request)
    if (key.revoked_at !== null) return reply.redirect('/dashboard/keys', 303)
    return sendPage(reply, revokeKeyPage({ csrf: csrfToken(reply), email: sessionOf(request).email, key }))
  })

  app.post('/keys/:id/revoke', { preHandler: app.csrfProtection }, async (request, reply) => {
    const key = await ownKey(request)
    // Through the authenticator, so this instance refuses the key at once (not after its cache).
    await app.deps.keys.revoke(key.id, sessionOf(request).accountId)
    return reply.redirect('/dashboard/keys?notice=key_revoked', 303)
  })

  app.get('/keys/:id/roll', async (request, reply) => {
    const key = await ownKey(request)
    if (keyState(key) === 'revoked' || keyState(key) === 'expired') {
      throw new ApiError('not_found', 'This key no longer works; create a new one instead of rolling it.')
    }
    return sendPage(reply, rollKeyPage({ csrf: csrfToken(reply), email: sessionOf(request).email, key }))
  })

  app.post('/keys/:id/roll', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    const old = await ownKey(request)
    if (keyState(old) === 'revoked' || keyState(old) === 'expired') {
      throw new ApiError('not_found', 'This key no longer works; create a new one instead of rolling it.')
    }
    const choice = ROLL_CHOICES.find((c) => c.value === field(request.body, 'expire')) ?? ROLL_CHOICES[2]!
    const created = await db.transaction().execute(async (trx) => {
      const made = await createApiKey(trx, {
        accountId: session.accountId,
        name: old.name,
        scopes: old.scopes,
      })
      if (choice.hours > 0) {
        await expireApiKeyAt(trx, session.accountId, old.id, nowIso(Date.now() + choice.hours * 3_600_000))
      }
      return made
    })
    // "Immediately" is a revocation, which takes effect at once on this instance.
    if (choice.hours === 0) await app.deps.keys.revoke(old.id, session.accountId)
    const after = await findApiKeyById(db, old.id)
    return sendPage(
      reply,
      newKeyPage({
        csrf: csrfToken(reply),
        email: session.email,
        apiKey: created.apiKey,
        info: created.info,
        baseUrl: baseUrlOf(request),
        rolledFrom: { info: old, expiresAt: choice.hours === 0 ? null : (after?.expires_at ?? null) },
      }),
    )
  })
}
