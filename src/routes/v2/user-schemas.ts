import { Type } from '@sinclair/typebox'
import { MAX_ID } from '../../db/account-ids.ts'
import { LIMITS, Nullable } from '../../schemas/common.ts'
import { USERNAME_MAX_LENGTH, USERNAME_PATTERN } from '../../users/usernames.ts'

const Short = (description: string) => Type.String({ maxLength: LIMITS.shortText, description })

/** Users in one createWithArray / createWithList request. */
export const MAX_USERS_PER_BATCH = 100
/**
 * Of those, users with a `password`: each costs a scrypt derivation, the service's costliest
 * work (src/accounts/password-work.ts), so one request's hashing stays bounded, whatever the
 * account sends.
 */
export const MAX_PASSWORDS_PER_BATCH = 10

/** Petstore v2 `User`; `password` is write-only (stored as a scrypt hash, never shown). */
export const UserV2Schema = Type.Object(
  {
    id: Type.Integer({ format: 'int64', description: 'Unique in your account.' }),
    username: Type.Optional(Type.String({ description: 'Unique in your account.' })),
    firstName: Type.Optional(Type.String()),
    lastName: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    userStatus: Type.Optional(Type.Integer({ format: 'int32', description: 'User Status' })),
  },
  { $id: 'User', description: 'A pet owner in your account, Petstore v2 representation.' },
)

const Username = Type.String({
  minLength: 1,
  maxLength: USERNAME_MAX_LENGTH,
  pattern: USERNAME_PATTERN,
  description:
    'Unique in your account; letters, digits and `. _ ~ @ -` (not dots alone), at most 64 characters; not `login`, `logout`, `createWithArray` or `createWithList`.',
  examples: ['theUser'],
})

/** The fields of a Petstore User body but its username; `null` on any of them means absent. */
const userFields = {
  id: Type.Optional(
    Nullable(
      Type.Integer({
        format: 'int64',
        minimum: 1,
        maximum: MAX_ID,
        description:
          'The user id, 1 to 2^53−1, unique in your account; absent, a new user gets the next free one and an existing one keeps its own.',
      }),
    ),
  ),
  firstName: Type.Optional(Nullable(Short('First name.'))),
  lastName: Type.Optional(Nullable(Short('Last name.'))),
  email: Type.Optional(Nullable(Short('Email.'))),
  password: Type.Optional(
    Nullable(
      Type.String({ maxLength: 1000, description: 'Write-only; stored hashed. Absent: left as it was.' }),
    ),
  ),
  phone: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
  userStatus: Type.Optional(
    Nullable(Type.Integer({ format: 'int32', minimum: -2147483648, maximum: 2147483647 })),
  ),
}

/** `POST /v2/user` and each item of a batch: the username names the user to create or replace. */
export const UserV2CreateBody = Type.Object(
  { ...userFields, username: Username },
  { additionalProperties: false },
)

/** `PUT /v2/user/{username}`: the body's username, when sent, is the user's new one. */
export const UserV2UpdateBody = Type.Object(
  { ...userFields, username: Type.Optional(Nullable(Username)) },
  { additionalProperties: false },
)

export const UserV2Batch = Type.Array(UserV2CreateBody, {
  maxItems: MAX_USERS_PER_BATCH,
  description: `At most ${MAX_USERS_PER_BATCH} users (at most ${MAX_PASSWORDS_PER_BATCH} of them with a \`password\`), each created or replaced by its username: all of them, or none.`,
})

/**
 * A path username is looked up as sent (within the text limits), so that a username stored
 * before the rules of usernames.ts can still be read and renamed.
 */
export const UsernameParams = Type.Object({
  username: Type.String({ description: 'The username of a user of your account.' }),
})

export const LoginQuery = Type.Object({
  username: Type.String({ description: 'The user name for login' }),
  password: Type.String({
    description: 'The password for login in clear text (never logged: the request log shows `password=***`)',
  }),
})

export const USER_V2_SCHEMAS = [UserV2Schema]
