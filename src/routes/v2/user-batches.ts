import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ReservedId } from '../../db/account-ids.ts'
import { ApiError, type FieldError } from '../../errors/api-error.ts'
import { clientGone } from '../../http/client-gone.ts'
import type { UserFields } from '../../users/user.ts'
import { saveUserByUsername } from '../../users/users-service.ts'
import { createOnce, IdempotencyHeaders } from '../idempotent-create.ts'
import { assertJson, assertValid } from './assertions.ts'
import { oauthScope, UNDECLARED_SECURITY } from './authentication.ts'
import { v2Problems } from './problems.ts'
import { assertUsernameAllowed, fieldsFromV2, withoutPassword } from './user-fields.ts'
import {
  MAX_PASSWORDS_PER_BATCH,
  MAX_USERS_PER_BATCH,
  UserV2Batch,
  type UserV2CreateBody,
} from './user-schemas.ts'
import { toUserV2 } from './user-views.ts'
import { USER_TAGS } from './users.ts'

type Item = Static<typeof UserV2CreateBody>

/** A field of the body as a client reads it: `[3].username` for item 3, `body` for the array itself. */
function itemParam(param: string): string {
  if (param === '') return 'body'
  return param.replace(/^(\d+)(?=\.|$)/, '[$1]')
}

/** The same problem, its fields named by item (`[3].username`), its detail saying which item when it names one. */
function forItems(error: ApiError, index?: number): ApiError {
  const rename = (param: string) => (index === undefined ? itemParam(param) : `[${index}].${param}`)
  const renamed = (text: string) => text.replace(/`([^`]*)`/g, (_, p: string) => `\`${rename(p)}\``)
  const errors = error.options.errors?.map((e: FieldError) => ({
    param: rename(e.param),
    message: renamed(e.message),
  }))
  const param = error.options.param === undefined ? undefined : rename(error.options.param)
  return new ApiError(
    error.code,
    index === undefined ? renamed(error.detail) : `Item [${index}]: ${error.detail}`,
    {
      ...error.options,
      ...(param === undefined ? {} : { param }),
      ...(errors === undefined ? {} : { errors }),
    },
  )
}

/** 422 naming the body as a whole. */
function bodyRefused(message: string): ApiError {
  return new ApiError('validation_failed', `Validation exception: ${message}.`, {
    param: 'body',
    errors: [{ param: 'body', message }],
  })
}

function assertBatchValid(request: Parameters<typeof assertValid>[0]): Item[] {
  const body = request.body
  if (Array.isArray(body) && body.length > MAX_USERS_PER_BATCH) {
    throw bodyRefused(`send at most ${MAX_USERS_PER_BATCH} users in one request (${body.length} were sent)`)
  }
  try {
    assertValid(request)
  } catch (error) {
    throw error instanceof ApiError ? forItems(error) : error
  }
  const items = body as Item[]
  const passwords = items.filter((item) => item.password != null).length
  if (passwords > MAX_PASSWORDS_PER_BATCH) {
    throw bodyRefused(
      `send at most ${MAX_PASSWORDS_PER_BATCH} users with a password in one request (${passwords} had one): each password is hashed, about 0.15 s of work; send the others in further requests`,
    )
  }
  const problems: FieldError[] = []
  const firstWith = new Map<string, number>()
  items.forEach((item, i) => {
    try {
      assertUsernameAllowed(item.username, `[${i}].username`)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      problems.push(...(error.options.errors ?? []))
    }
    for (const [key, value] of [
      ['username', item.username],
      ['id', item.id],
    ] as const) {
      if (value == null) continue
      const first = firstWith.get(`${key}:${value}`)
      if (first === undefined) firstWith.set(`${key}:${value}`, i)
      else
        problems.push({
          param: `[${i}].${key}`,
          message: `\`[${i}].${key}\` is also the ${key} of [${first}]`,
        })
    }
  })
  if (problems.length > 0) {
    const shown = problems.slice(0, 20)
    throw new ApiError(
      'validation_failed',
      `Validation exception: ${shown.map((p) => p.message).join('; ')}.`,
      {
        errors: shown,
        ...(problems.length === 1 ? { param: shown[0]!.param } : {}),
        ...(problems.length > shown.length
          ? { extensions: { errors_omitted: problems.length - shown.length } }
          : {}),
      },
    )
  }
  return items
}

/**
 * The Petstore's `createWithArray` and `createWithList` (one operation under two names): each
 * user is created, or replaced when the account has its username (as `POST /v2/user` does), all
 * in one transaction, so a failure anywhere changes nothing; the problem names the item at fault.
 */
export async function v2UserBatchRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  for (const [path, operationId] of [
    ['/user/createWithArray', 'createUsersWithArrayInput'],
    ['/user/createWithList', 'createUsersWithListInput'],
  ] as const) {
    app.post(
      path,
      {
        attachValidation: true,
        config: { scope: 'write:users', ...UNDECLARED_SECURITY },
        preValidation: async (request) => assertJson(request, 'users'),
        schema: {
          operationId,
          summary: 'Creates list of users with given input array',
          description: `Each user is created, or replaced when your account has its username, as \`POST /v2/user\` does: all of them in one transaction, or none. At most ${MAX_USERS_PER_BATCH} users, of which at most ${MAX_PASSWORDS_PER_BATCH} with a \`password\`; a username or id may appear once. A problem names the item at fault (\`[3].username\`). Passwords are hashed one after another (about 0.15 s each), and no more once the client has gone. Answers 200 with the users as stored. Takes \`Idempotency-Key\`.`,
          tags: USER_TAGS,
          security: [oauthScope('write:users')],
          headers: IdempotencyHeaders,
          body: UserV2Batch,
          response: { 200: Type.Array(Type.Ref('User')), ...v2Problems(409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const items = assertBatchValid(request)
        const accountId = request.principal!.accountId
        // One password at a time: the account's password work is bounded (src/accounts/password-work.ts),
        // and none is left to do for a client that has gone.
        const gone = clientGone(reply)
        const fields: UserFields[] = []
        for (const item of items) {
          gone.throwIfAborted()
          fields.push(await fieldsFromV2(item, accountId, undefined, gone))
        }
        // Reserved before the transaction opens (src/db/account-ids.ts).
        const ids: (ReservedId | undefined)[] = []
        for (const item of items)
          ids.push(item.id == null ? await database.ids.reserve(accountId, 'user') : undefined)
        return createOnce(
          db,
          request,
          reply,
          `/v2${path}`,
          async (trx) => {
            const users = []
            for (const [i, item] of items.entries()) {
              try {
                const { user } = await saveUserByUsername(
                  trx,
                  accountId,
                  {
                    ...fields[i],
                    username: item.username,
                    name: fields[i]?.name ?? item.username,
                  },
                  ids[i],
                )
                users.push(toUserV2(user))
              } catch (error) {
                throw error instanceof ApiError ? forItems(error, i) : error
              }
            }
            return { status: 200, headers: {}, body: users }
          },
          items.map(withoutPassword),
        )
      },
    )
  }
}
