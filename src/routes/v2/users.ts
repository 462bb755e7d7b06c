import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { assertOwnsNoPets } from '../../pets/pets-service.ts'
import { deleteUser, getUserByUsername, saveUserByUsername, updateUser } from '../../users/users-service.ts'
import { createOnce, IdempotencyHeaders } from '../idempotent-create.ts'
import { assertJson, assertValid } from './assertions.ts'
import { oauthScope, UNDECLARED_SECURITY } from './authentication.ts'
import { v2Problems } from './problems.ts'
import { assertUsernameAllowed, fieldsFromV2, type UserV2Body, withoutPassword } from './user-fields.ts'
import { UsernameParams, UserV2CreateBody, UserV2UpdateBody } from './user-schemas.ts'
import { toUserV2 } from './user-views.ts'

export const USER_TAGS = ['user']

/**
 * The Petstore document declares no security on /user operations; ours need the bearer token,
 * which a generated client then sends only as a default header: the 401 says so
 * (authentication.ts).
 */

/** Where a user answers; its username escaped as a path segment. */
export function userLocation(username: string | null): string | undefined {
  return username === null ? undefined : `/v2/user/${encodeURIComponent(username)}`
}

/**
 * The `username` path parameter: any text a username was ever stored as (legacy ones may break
 * today's rules, and must stay reachable), but never a control character: 400 "Invalid username
 * supplied".
 */
export function usernameParam(request: FastifyRequest): string {
  const { username } = request.params as { username?: unknown }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (typeof username !== 'string' || username === '' || /[\u0000-\u001f\u007f]/.test(username)) {
    throw new ApiError(
      'invalid_username',
      'Invalid username supplied: a username is 1 to 200 characters, none of them a control character.',
      { param: 'username' },
    )
  }
  return username
}

export async function v2UserRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.post(
    '/user',
    {
      attachValidation: true,
      config: { scope: 'write:users', ...UNDECLARED_SECURITY },
      preValidation: async (request) => assertJson(request, 'user'),
      schema: {
        operationId: 'createUserV2',
        summary: 'Create user',
        description:
          'Creates the user named by `username`, or replaces the Petstore fields of the user of your account that has it (as the Petstore does, so a test suite can run twice); answers 200 with the user. `id` is kept when sent (409 when another user has it), else assigned. `password` is stored hashed, never shown, and left as it was when absent. Takes `Idempotency-Key`.',
        tags: USER_TAGS,
        security: [oauthScope('write:users')],
        headers: IdempotencyHeaders,
        body: UserV2CreateBody,
        response: { 200: Type.Ref('User'), ...v2Problems(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      assertValid(request)
      const body = request.body as Static<typeof UserV2CreateBody>
      assertUsernameAllowed(body.username)
      const accountId = request.principal!.accountId
      const fields = await fieldsFromV2(body, accountId)
      // Reserved before the transaction opens (src/db/account-ids.ts); unused when the username
      // exists or the body chose an id: ids may have gaps.
      const id = body.id == null ? await database.ids.reserve(accountId, 'user') : undefined
      return createOnce(
        db,
        request,
        reply,
        '/v2/user',
        async (trx) => {
          const { user } = await saveUserByUsername(
            trx,
            accountId,
            {
              ...fields,
              username: body.username,
              name: fields.name ?? body.username,
            },
            id,
          )
          const location = userLocation(user.username)
          return {
            status: 200,
            headers: { etag: etagFor(user.version), ...(location === undefined ? {} : { location }) },
            body: toUserV2(user),
          }
        },
        withoutPassword(body),
      )
    },
  )

  app.get(
    '/user/:username',
    {
      attachValidation: true,
      config: { scope: 'read:users', ...UNDECLARED_SECURITY },
      schema: {
        operationId: 'getUserByName',
        summary: 'Get user by user name',
        tags: USER_TAGS,
        security: [oauthScope('read:users')],
        params: UsernameParams,
        response: {
          200: Type.Ref('User'),
          ...v2Problems(404),
          400: { ...Type.Ref('Problem'), description: 'Invalid username supplied' },
          404: { ...Type.Ref('Problem'), description: 'User not found' },
        },
      },
    },
    async (request, reply) => {
      const user = await getUserByUsername(db, request.principal!.accountId, usernameParam(request))
      reply.header('etag', etagFor(user.version))
      return toUserV2(user)
    },
  )

  app.put(
    '/user/:username',
    {
      attachValidation: true,
      config: { scope: 'write:users', ...UNDECLARED_SECURITY },
      preValidation: async (request) => assertJson(request, 'user'),
      schema: {
        operationId: 'updateUserV2',
        summary: 'Updated user',
        description:
          'Replaces the Petstore fields of the user; a `username` in the body renames it (409 when another user has that one), `id` changes its id (409 likewise), `password` changes only when sent. Takes `If-Match`.',
        tags: USER_TAGS,
        security: [oauthScope('write:users')],
        params: UsernameParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: UserV2UpdateBody,
        response: {
          200: Type.Ref('User'),
          ...v2Problems(404, 409, 412, 413, 415, 422),
          400: { ...Type.Ref('Problem'), description: 'Invalid user supplied' },
          404: { ...Type.Ref('Problem'), description: 'User not found' },
        },
      },
    },
    async (request, reply) => {
      const username = usernameParam(request)
      assertValid(request)
      const body = request.body as UserV2Body
      assertUsernameAllowed(body.username)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const accountId = request.principal!.accountId
      const fields = await fieldsFromV2(body, accountId, username)
      const user = await db.transaction().execute(async (trx) => {
        const current = await getUserByUsername(trx, accountId, username)
        return updateUser(trx, accountId, current.id, fields, ifMatch)
      })
      reply.header('etag', etagFor(user.version))
      const location = userLocation(user.username)
      if (location !== undefined && user.username !== username) reply.header('content-location', location)
      return toUserV2(user)
    },
  )

  app.delete(
    '/user/:username',
    {
      attachValidation: true,
      config: { scope: 'write:users', ...UNDECLARED_SECURITY },
      schema: {
        operationId: 'deleteUserV2',
        summary: 'Delete user',
        description: 'Refused with 409 while pets name the user as their owner. Takes `If-Match`.',
        tags: USER_TAGS,
        security: [oauthScope('write:users')],
        params: UsernameParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: {
          200: Type.Ref('ApiResponse'),
          ...v2Problems(404, 409, 412),
          400: { ...Type.Ref('Problem'), description: 'Invalid username supplied' },
          404: { ...Type.Ref('Problem'), description: 'User not found' },
        },
      },
    },
    async (request) => {
      const username = usernameParam(request)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const accountId = request.principal!.accountId
      await db.transaction().execute(async (trx) => {
        const current = await getUserByUsername(trx, accountId, username)
        return deleteUser(trx, accountId, current.id, assertOwnsNoPets, ifMatch)
      })
      return { code: 200, type: 'unknown', message: username }
    },
  )
}
