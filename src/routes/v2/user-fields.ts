import type { Static } from '@sinclair/typebox'
import { ApiError } from '../../errors/api-error.ts'
import type { UserFields } from '../../users/user.ts'
import { usernameProblem } from '../../users/usernames.ts'
import { displayName, hashUserPassword } from '../../users/users-service.ts'
import type { UserV2UpdateBody } from './user-schemas.ts'

export type UserV2Body = Static<typeof UserV2UpdateBody>

/**
 * The domain fields of a Petstore User body: a full replace of the Petstore fields (absent or
 * null: cleared), but `password` (changed only when sent), `id` (kept when absent) and
 * `username` (kept when absent: `current` is the user's present one, for its display name).
 * `signal`: the client went away, so a password not yet hashed is not (src/http/client-gone.ts).
 */
export async function fieldsFromV2(
  body: UserV2Body,
  accountId: string,
  current?: string,
  signal?: AbortSignal,
): Promise<UserFields> {
  const fields: UserFields = {
    firstName: body.firstName ?? null,
    lastName: body.lastName ?? null,
    email: body.email ?? null,
    phone: body.phone ?? null,
    userStatus: body.userStatus ?? null,
  }
  if (body.username != null) fields.username = body.username
  if (body.id != null) fields.petstoreId = body.id
  const name = displayName({ ...body, username: body.username ?? current ?? null })
  if (name !== undefined) fields.name = name
  if (body.password != null) fields.passwordHash = await hashUserPassword(body.password, accountId, signal)
  return fields
}

/**
 * 422 for a username the schema lets through but usernames.ts refuses (the names of the
 * operations that share `/v2/user/…`); `param` names where it was (`username`, `[3].username`).
 */
export function assertUsernameAllowed(username: string | null | undefined, param = 'username'): void {
  if (username == null) return
  const problem = usernameProblem(username)
  if (problem === undefined) return
  const message = `\`${param}\`: ${problem}`
  throw new ApiError('validation_failed', `Validation exception: ${message}.`, {
    param,
    errors: [{ param, message }],
  })
}

/** The fingerprint of a body for Idempotency-Key: it covers that a password was sent, never the password. */
export function withoutPassword<T extends { password?: string | null }>(body: T): T {
  return body.password == null ? body : { ...body, password: '(sent)' }
}
