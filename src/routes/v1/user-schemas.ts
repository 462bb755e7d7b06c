import { Type } from '@sinclair/typebox'
import { LIMITS, Nullable, Text } from '../../schemas/common.ts'
import { IdCursor, ListOf, ListQuery } from '../../schemas/list.ts'
import { USERNAME_MAX_LENGTH, USERNAME_OR_EMPTY_PATTERN } from '../../users/usernames.ts'

export const UserV1Schema = Type.Object(
  {
    id: Type.String({ examples: ['usr_4fQk2T9ZpLm0aB7cD1eF'] }),
    object: Type.Literal('user'),
    name: Type.String(),
    username: Nullable(
      Type.String({ description: 'Unique in your account; the user is /v2/user/{username} on v2.' }),
    ),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    version: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A pet owner in your account.' },
)

const Email = Type.String({
  maxLength: LIMITS.shortText,
  description: 'Contact email; empty or null clears it.',
})
const Username = Type.String({
  maxLength: USERNAME_MAX_LENGTH,
  pattern: USERNAME_OR_EMPTY_PATTERN,
  description:
    'Unique in your account (409 when another user has it): letters, digits and `. _ ~ @ -` (not dots alone), at most 64 characters; not `login`, `logout`, `createWithArray` or `createWithList`. Empty or null clears it.',
})
const Phone = Type.String({ maxLength: 40, description: 'Contact phone number; empty or null clears it.' })

export const CreateUserBody = Type.Object(
  {
    name: Text('Full name (required).'),
    username: Type.Optional(Nullable(Username)),
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
  },
  { additionalProperties: false },
)

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Text('New name.')),
    username: Type.Optional(Nullable(Username)),
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
  },
  { additionalProperties: false },
)

export const UserIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The user id (usr_…).' }),
})

export const ListUsersQuery = ListQuery(
  {
    starting_after: IdCursor('Last user id of the previous page.'),
    ending_before: IdCursor('First user id of the current page.'),
  },
  { email: Type.Optional(Type.String({ maxLength: LIMITS.shortText })) },
)

/** The answer of a delete. */
export const DeletedUserSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('user'),
  deleted: Type.Literal(true),
})

export const UserListSchema = ListOf(UserV1Schema)
