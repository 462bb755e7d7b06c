import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { PasswordWorkBusyError } from '../../accounts/password-work.ts'
import { hashPassword } from '../../accounts/passwords.ts'
import type { Db } from '../../db/schema.ts'
import { ApiError } from '../../errors/api-error.ts'
import { validationException } from '../../errors/error-handler.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import type { User, UserFields } from '../../users/user.ts'
import { findUserBySeq } from '../../users/users-repository.ts'
import { createUser, deleteUser, updateUser } from '../../users/users-service.ts'
import { v2Problems } from './problems.ts'
import { UserIdV2Params, UserV2Body } from './user-schemas.ts'

const tags = ['user']
const OAUTH = (scope: string) => ({ petstore_auth: [scope] })

export interface UserV2 {
  id: number
  username?: string
  firstName?: string
  lastName?: string
  email?: string
  phone?: string
  userStatus?: number
}

export function toUserV2(user: User): UserV2 {
  const out: UserV2 = { id: user.seq }
  if (user.username !== null) out.username = user.username
  if (user.firstName !== null) out.firstName = user.firstName
  if (user.lastName !== null) out.lastName = user.lastName
  if (user.email !== null) out.email = user.email
  if (user.phone !== null) out.phone = user.phone
  if (user.userStatus !== null) out.userStatus = user.userStatus
  return out
}

type Body = Static<typeof UserV2Body>

/** The domain requires a name: the v2 names, else the username. */
function displayName(body: Body): string | undefined {
  const full = [body.firstName, body.lastName].filter((s) => s != null && s.trim() !== '').join(' ')
  return full !== '' ? full : body.username?.trim() || undefined
}

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

/** The scrypt work is charged to the account; past its bound it is told to slow down. */
async function hashUserPassword(password: string, accountId: string): Promise<string> {
  try {
    return await hashPassword(password, { account: accountId })
  } catch (error) {
    if (!(error instanceof PasswordWorkBusyError)) throw error
    throw new ApiError(
      'rate_limited',
      `Too many user passwords of your account are being hashed at once; retry in ${error.retryAfterSeconds} s.`,
      { headers: { 'retry-after': String(error.retryAfterSeconds) } },
    )
  }
}

function assertValid(request: FastifyRequest): void {
  const validation = (
    request.validationError as { validation?: Parameters<typeof validationException>[0] } | undefined
  )?.validation
  if (validation !== undefined) throw validationException(validation)
}

function userIdParam(request: FastifyRequest): number {
  const segment = decodeURIComponent(request.url.split('?')[0]?.split('/')[3] ?? '')
  if (!/^-?\d{1,19}$/.test(segment) || BigInt(segment) > 2n ** 63n - 1n || BigInt(segment) < -(2n ** 63n)) {
    throw new ApiError('invalid_id', 'Invalid ID supplied: userId must be an integer within int64.', {
      param: 'userId',
    })
  }
  return Number(segment)
}

function userNotFound(id: number): ApiError {
  return new ApiError('user_not_found', `No user with id ${id} exists in your account.`, { param: 'userId' })
}

export async function v2UserRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps

  /** The domain's user id (usr_…) behind a v2 integer id. */
  async function resolve(trx: Db, accountId: string, id: number): Promise<User> {
    const user = Number.isSafeInteger(id) ? await findUserBySeq(trx, accountId, id) : undefined
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
          'Answers 200 with the user and its assigned integer `id`. `password` is stored hashed and never shown.',
        tags,
        security: [OAUTH('write:users')],
        body: UserV2Body,
        response: { 200: Type.Ref('User'), ...v2Problems(413, 415, 422) },
      },
    },
    async (request, reply) => {
      assertValid(request)
      const body = request.body as Body
      const fields = await fieldsFromV2(body, request.principal!.accountId)
      const user = await db
        .transaction()
        .execute((trx) =>
          createUser(trx, request.principal!.accountId, { ...fields, name: fields.name ?? 'Unnamed user' }),
        )
      reply.header('etag', etagFor(user.version)).header('location', `/v2/user/${user.seq}`)
      return toUserV2(user)
    },
  )

  app.get(
    '/user/:userId',
    {
      attachValidation: true,
      config: { scope: 'read:users' },
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
      const user = await resolve(db, request.principal!.accountId, userIdParam(request))
      reply.header('etag', etagFor(user.version))
      return toUserV2(user)
    },
  )

  app.put(
    '/user/:userId',
    {
      attachValidation: true,
      config: { scope: 'write:users' },
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
      const id = userIdParam(request)
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
      const id = userIdParam(request)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const accountId = request.principal!.accountId
      await db.transaction().execute(async (trx) => {
        const current = await resolve(trx, accountId, id)
        return deleteUser(trx, accountId, current.id, ifMatch)
      })
      return { code: 200, type: 'unknown', message: String(id) }
    },
  )
}
