import { PasswordWorkBusyError } from '../accounts/password-work.ts'
import { hashPassword } from '../accounts/passwords.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { recordEvent } from '../events/events-service.ts'
import { fieldChanges } from '../lib/field-diff.ts'
import type { IfMatch } from '../lib/optimistic.ts'
import { writeAtCurrentVersion } from '../lib/optimistic.ts'
import { nowIso } from '../lib/time.ts'
import { toUserV1, type User, type UserFields } from './user.ts'
import {
  deleteUserAtVersion,
  findUser,
  findUserBySeq,
  insertUser,
  listUsers,
  type UserListQuery,
  updateUserAtVersion,
} from './users-repository.ts'

const USER_FIELDS = [
  'name',
  'email',
  'phone',
  'username',
  'firstName',
  'lastName',
  'passwordHash',
  'userStatus',
] as const

const EVENT_NAMES: Partial<Record<string, string>> = {
  firstName: 'first_name',
  lastName: 'last_name',
  userStatus: 'user_status',
}

function userNotFound(id: string): ApiError {
  return new ApiError('user_not_found', `No user with id ${JSON.stringify(id)} exists in your account.`, {
    param: 'id',
  })
}

export async function createUser(
  db: Db,
  accountId: string,
  fields: UserFields & { name: string },
): Promise<User> {
  const at = nowIso()
  const user = await insertUser(db, accountId, fields, at)
  await recordEvent(db, { accountId, type: 'user.created', objectId: user.id, object: toUserV1(user), at })
  return user
}

export async function getUser(db: Db, accountId: string, id: string): Promise<User> {
  const user = await findUser(db, accountId, id)
  if (user === undefined) throw userNotFound(id)
  return user
}

export async function updateUser(
  db: Db,
  accountId: string,
  id: string,
  fields: UserFields,
  ifMatch?: IfMatch,
): Promise<User> {
  return writeAtCurrentVersion({
    load: () => findUser(db, accountId, id),
    missing: () => userNotFound(id),
    ifMatch,
    write: async (current) => {
      const { changes, previous: before } = fieldChanges<UserFields>(current, fields, USER_FIELDS)
      // Never copy a password hash into an event; other names as stored (snake_case).
      const previous = Object.fromEntries(
        Object.entries(before)
          .filter(([key]) => key !== 'passwordHash')
          .map(([key, value]) => [EVENT_NAMES[key] ?? key, value]),
      )
      if (Object.keys(changes).length === 0) return current
      const at = nowIso()
      const updated = await updateUserAtVersion(db, accountId, id, current.version, changes, at)
      if (updated === undefined) return undefined
      await recordEvent(db, {
        accountId,
        type: 'user.updated',
        objectId: id,
        object: toUserV1(updated),
        previousAttributes: previous,
        at,
      })
      return updated
    },
  })
}

/**
 * What must hold before a user is deleted, checked in the delete's transaction: that no pet names
 * the user as owner (pets-service.ts assertOwnsNoPets). Required, so no caller forgets it.
 */
export type DeleteGuard = (db: Db, accountId: string, userId: string) => Promise<void>

export async function deleteUser(
  db: Db,
  accountId: string,
  id: string,
  guard: DeleteGuard,
  ifMatch?: IfMatch,
): Promise<User> {
  return writeAtCurrentVersion({
    load: () => findUser(db, accountId, id),
    missing: () => userNotFound(id),
    ifMatch,
    write: async (current) => {
      await guard(db, accountId, id)
      if (!(await deleteUserAtVersion(db, accountId, id, current.version))) return undefined
      await recordEvent(db, {
        accountId,
        type: 'user.deleted',
        objectId: id,
        object: toUserV1(current),
        at: nowIso(),
      })
      return current
    },
  })
}

export async function listUsersOfAccount(db: Db, accountId: string, query: UserListQuery) {
  const page = await listUsers(db, accountId, query)
  if (page === undefined) {
    const cursor = query.startingAfter ?? query.endingBefore
    throw new ApiError(
      'invalid_cursor',
      `The cursor ${JSON.stringify(cursor)} is not a user of your account.`,
      {
        param: query.startingAfter !== undefined ? 'starting_after' : 'ending_before',
      },
    )
  }
  return page
}

export { findUser, findUserBySeq }

/** The name the domain requires, from the Petstore's fields: first and last name, else the username. */
export function displayName(fields: {
  firstName?: string | null
  lastName?: string | null
  username?: string | null
}): string | undefined {
  const full = [fields.firstName, fields.lastName].filter((s) => s != null && s.trim() !== '').join(' ')
  return full !== '' ? full : fields.username?.trim() || undefined
}

/** A user's password, hashed; the scrypt work is charged to the account, and past its bound it is told to slow down. */
export async function hashUserPassword(password: string, accountId: string): Promise<string> {
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

// Reads for the dashboard's pages (src/dashboard/routes/data-routes.ts).
export { countUsers, listUserNames, listUsers, userNamesByIds } from './users-repository.ts'
