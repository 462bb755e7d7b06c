import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Db } from '../../db/schema.ts'
import { ApiError } from '../../errors/api-error.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { createOnce, IdempotencyHeaders } from '../../idempotency/idempotent-create.ts'
import { assertOwnsNoPets } from '../../pets/pets-service.ts'
import type { User, UserFields } from '../../users/user.ts'
import {
  createUser,
  deleteUser,
  displayName,
  findUserBySeq,
  hashUserPassword,
  updateUser,
} from '../../users/users-service.ts'
import { assertValid } from './assertions.ts'
import { parseId } from './int64.ts'
import { v2Problems } from './problems.ts'
import { UserIdV2Params, UserV2Body } from './user-schemas.ts'
import { toUserV2 } from './user-views.ts'

const tags = ['user']
const OAUTH = (scope: string) => ({ petstore_auth: [scope] })

type Body = Static<typeof UserV2Body>

/** A full replace of the Petstore fields (absent or null: cleared); `password` only when sent. */
async function fieldsFromV2(body: Body, accountId: string): Promise<UserFields> {
  const fields: UserFields = {
    username: body.username ?? null,
    firstName: body.firstName ?? null,
    lastName: body.lastName ?? null,
    email: body.email ?? null,
    phone: body.phone ?? null,
    userStatus: body.userStatus ?? null,
  }
  const name = displayName(body)
  if (name !== undefined) fields.name = name
  if (body.password != null) fields.passwordHash = await hashUserPassword(body.password, accountId)
  return fields
}

/**
 * preValidation hook: the `userId` path parameter by the int64 rule (int64.ts), read before
 * validation coerces it to a float. Any id that passes is safe: the route reads the validated one.
 */
async function checkUserIdParam(request: FastifyRequest): Promise<void> {
  parseId((request.params as { userId?: unknown }).userId, 'userId', userNotFound)
}

function userNotFound(id: number | string): ApiError {
  return new ApiError('user_not_found', `No user with id ${id} exists in your account.`, { param: 'userId' })
}

export async function v2UserRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps

  /** The domain's user id (usr_…) behind a v2 integer id. */
  async function resolve(trx: Db, accountId: string, id: number): Promise<User> {
    const user = await findUserBySeq(trx, accountId, id)
    if (user === undefined) throw userNotFound(id)
    return user
  }

  app.post(
    '/user',
    {
      attachValidation: true,
      config: { scope: 'write:users' },
      schema: {
        operationId: 'createUserV2',
        summary: 'Create user',
        description:
          'Answers 200 with the user and its assigned integer `id`. `password` is stored hashed and never shown. Takes `Idempotency-Key`.',
        tags,
        security: [OAUTH('write:users')],
        headers: IdempotencyHeaders,
        body: UserV2Body,
        response: { 200: Type.Ref('User'), ...v2Problems(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      assertValid(request)
      const accountId = request.principal!.accountId
      const body = request.body as Body
      const fields = await fieldsFromV2(body, accountId)
      // The fingerprint is a fast hash: it covers that a password was sent, never the password.
      const params = body.password == null ? body : { ...body, password: '(sent)' }
      return createOnce(
        db,
        request,
        reply,
        '/v2/user',
        async (trx) => {
          const user = await createUser(trx, accountId, { ...fields, name: fields.name ?? 'Unnamed user' })
          return {
            status: 200,
            headers: { etag: etagFor(user.version), location: `/v2/user/${user.seq}` },
            body: toUserV2(user),
          }
        },
        params,
      )
    },
  )

  app.get(
    '/user/:userId',
    {
      attachValidation: true,
      config: { scope: 'read:users' },
      preValidation: checkUserIdParam,
      schema: {
        operationId: 'getUserById',
        summary: 'Get user by id',
        tags,
        security: [OAUTH('read:users')],
        params: UserIdV2Params,
        response: { 200: Type.Ref('User'), ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const user = await resolve(db, request.principal!.accountId, request.params.userId)
      reply.header('etag', etagFor(user.version))
      return toUserV2(user)
    },
  )

  app.put(
    '/user/:userId',
    {
      attachValidation: true,
      config: { scope: 'write:users' },
      preValidation: checkUserIdParam,
      schema: {
        operationId: 'updateUserV2',
        summary: 'Updated user',
        description: 'Replaces the Petstore fields; `password` changes only when sent. Takes `If-Match`.',
        tags,
        security: [OAUTH('write:users')],
        params: UserIdV2Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: UserV2Body,
        response: { 200: Type.Ref('User'), ...v2Problems(404, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const id = request.params.userId
      assertValid(request)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const accountId = request.principal!.accountId
      const fields = await fieldsFromV2(request.body as Body, accountId)
      const user = await db.transaction().execute(async (trx) => {
        const current = await resolve(trx, accountId, id)
        return updateUser(trx, accountId, current.id, fields, ifMatch)
      })
      reply.header('etag', etagFor(user.version))
      return toUserV2(user)
    },
  )

  app.delete(
    '/user/:userId',
    {
      attachValidation: true,
      config: { scope: 'write:users' },
      preValidation: checkUserIdParam,
      schema: {
        operationId: 'deleteUserV2',
        summary: 'Delete user',
        description: 'Refused with 409 while pets name the user as their owner.',
        tags,
        security: [OAUTH('write:users')],
        params: UserIdV2Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 409, 412) },
      },
    },
    async (request) => {
      const id = request.params.userId
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const accountId = request.principal!.accountId
      await db.transaction().execute(async (trx) => {
        const current = await resolve(trx, accountId, id)
        return deleteUser(trx, accountId, current.id, assertOwnsNoPets, ifMatch)
      })
      return { code: 200, type: 'unknown', message: String(id) }
    },
  )
}
