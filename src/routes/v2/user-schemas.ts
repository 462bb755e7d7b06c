import { Type } from '@sinclair/typebox'
import { LIMITS, Nullable } from '../../schemas/common.ts'

const Short = (description: string) => Type.String({ maxLength: LIMITS.shortText, description })

/** Petstore v2 `User`; `password` is write-only (stored as a scrypt hash, never shown). */
export const UserV2Schema = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    username: Type.Optional(Type.String()),
    firstName: Type.Optional(Type.String()),
    lastName: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    userStatus: Type.Optional(Type.Integer({ format: 'int32', description: 'User Status' })),
  },
  { $id: 'User', description: 'A pet owner in your account, Petstore v2 representation.' },
)

export const UserV2Body = Type.Object(
  {
    id: Type.Optional(Type.Integer({ format: 'int64', description: 'Ignored: the service assigns ids.' })),
    username: Type.Optional(Nullable(Short('Username.'))),
    firstName: Type.Optional(Nullable(Short('First name.'))),
    lastName: Type.Optional(Nullable(Short('Last name.'))),
    email: Type.Optional(Nullable(Short('Email.'))),
    password: Type.Optional(
      Nullable(Type.String({ maxLength: 1000, description: 'Write-only; stored hashed.' })),
    ),
    phone: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
    userStatus: Type.Optional(
      Nullable(Type.Integer({ format: 'int32', minimum: -2147483648, maximum: 2147483647 })),
    ),
  },
  { additionalProperties: false },
)

export const UserIdV2Params = Type.Object({
  userId: Type.Integer({ format: 'int64', description: 'The user id (an integer on v2).' }),
})

export const USER_V2_SCHEMAS = [UserV2Schema]
