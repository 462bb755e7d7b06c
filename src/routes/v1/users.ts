import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { assertOneCursor, emptyToNull } from '../../http/replies.ts'
import { assertOwnsNoPets } from '../../pets/pets-service.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'
import { toUserV1, type UserFields } from '../../users/user.ts'
import { usernameProblem } from '../../users/usernames.ts'
import { createUser, deleteUser, getUser, listUsersOfAccount, updateUser } from '../../users/users-service.ts'
import { createOnce, IdempotencyHeaders } from '../idempotent-create.ts'
import {
  CreateUserBody,
  DeletedUserSchema,
  ListUsersQuery,
  UpdateUserBody,
  UserIdParams,
  UserListSchema,
  UserV1Schema,
} from './user-schemas.ts'

const tags = ['v1-user']
const security = API_KEY_SECURITY

function fieldsFromV1(body: Static<typeof UpdateUserBody>): UserFields {
  const fields: UserFields = {}
  if (body.name !== undefined) fields.name = body.name
  if (body.username !== undefined) fields.username = emptyToNull(body.username)
  if (fields.username != null) {
    const problem = usernameProblem(fields.username)
    if (problem !== undefined) {
      throw new ApiError('parameter_invalid', `Invalid parameter \`username\`: ${problem}.`, {
        param: 'username',
      })
    }
  }
  if (body.email !== undefined) fields.email = emptyToNull(body.email)
  if (body.phone !== undefined) fields.phone = emptyToNull(body.phone)
  return fields
}

export async function v1UserRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.post(
    '/user',
    {
      config: { scope: 'write:users' },
      schema: {
        operationId: 'createUser',
        summary: 'Create a user (pet owner)',
        tags,
        security,
        headers: IdempotencyHeaders,
        body: CreateUserBody,
        response: { 201: UserV1Schema, ...problemResponses(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal!
      const fields = { ...fieldsFromV1(request.body), name: request.body.name }
      // Reserved before the transaction opens (see src/db/account-ids.ts).
      const id = await database.ids.reserve(accountId, 'user')
      return createOnce(db, request, reply, '/v1/user', async (trx) => {
        const user = await createUser(trx, accountId, fields, id)
        return {
          status: 201,
          headers: { location: `/v1/user/${user.id}`, etag: etagFor(user.version) },
          body: toUserV1(user),
        }
      })
    },
  )

  app.get(
    '/user/:id',
    {
      config: { scope: 'read:users' },
      schema: {
        operationId: 'getUser',
        summary: 'Get a user',
        tags,
        security,
        params: UserIdParams,
        response: { 200: UserV1Schema, ...problemResponses(404) },
      },
    },
    async (request, reply) => {
      const user = await getUser(db, request.principal!.accountId, request.params.id)
      reply.header('etag', etagFor(user.version))
      return toUserV1(user)
    },
  )

  app.patch(
    '/user/:id',
    {
      config: { scope: 'write:users' },
      schema: {
        operationId: 'updateUser',
        summary: 'Update some fields of a user',
        tags,
        security,
        params: UserIdParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: UpdateUserBody,
        response: { 200: UserV1Schema, ...problemResponses(404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const user = await db
        .transaction()
        .execute((trx) =>
          updateUser(
            trx,
            request.principal!.accountId,
            request.params.id,
            fieldsFromV1(request.body),
            ifMatch,
          ),
        )
      reply.header('etag', etagFor(user.version))
      return toUserV1(user)
    },
  )

  app.delete(
    '/user/:id',
    {
      config: { scope: 'write:users' },
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user',
        description: 'Refused with 409 while pets still name the user as their owner.',
        tags,
        security,
        params: UserIdParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: {
          200: DeletedUserSchema,
          ...problemResponses(404, 409, 412),
        },
      },
    },
    async (request) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const user = await db
        .transaction()
        .execute((trx) =>
          deleteUser(trx, request.principal!.accountId, request.params.id, assertOwnsNoPets, ifMatch),
        )
      return { id: user.id, object: 'user' as const, deleted: true as const }
    },
  )

  app.get(
    '/user',
    {
      config: { scope: 'read:users' },
      schema: {
        operationId: 'listUsers',
        summary: 'List users, newest first',
        tags,
        security,
        querystring: ListUsersQuery,
        response: { 200: UserListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query
      assertOneCursor(q.starting_after, q.ending_before)
      const page = await listUsersOfAccount(db, request.principal!.accountId, {
        limit: q.limit,
        ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
        ...(q.ending_before === undefined ? {} : { endingBefore: q.ending_before }),
        ...(q.email === undefined ? {} : { email: q.email }),
      })
      return {
        object: 'list' as const,
        data: page.users.map(toUserV1),
        has_more: page.hasMore,
        url: '/v1/user',
      }
    },
  )
}
