import { PasswordWorkBusyError } from '../accounts/password-work.ts'
import { hashPassword } from '../accounts/passwords.ts'
import type { ReservedId } from '../db/account-ids.ts'
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
  findUserByUsername,
  insertUser,
  listUsers,
  type UserListQuery,
  uniqueConflictOf,
  updateUserAtVersion,
  userIdOfPetstoreId,
} from './users-repository.ts'

const USER_FIELDS = [
  'petstoreId',
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

/** Never in an event: the hash is a secret, and the v2 id is not part of the v1 object. */
const NOT_IN_EVENTS = new Set(['passwordHash', 'petstoreId'])

function userNotFound(id: string): ApiError {
  return new ApiError('user_not_found', `No user with id ${JSON.stringify(id)} exists in your account.`, {
    param: 'id',
  })
}

export function usernameTaken(username: string, param = 'username'): ApiError {
  return new ApiError(
    'username_taken',
    `The username ${JSON.stringify(username)} is already taken by another user of your account.`,
    { param },
  )
}

export function petstoreIdTaken(id: number, param = 'id'): ApiError {
  return new ApiError(
    'user_id_taken',
    `The user id ${id} is already taken by another user of your account.`,
    {
      param,
    },
  )
}

/** 409 when the username or v2 id the fields set belongs to a user of the account other than `self`. */
async function assertFree(db: Db, accountId: string, fields: UserFields, self?: string): Promise<void> {
  if (fields.username != null) {
    const holder = await findUserByUsername(db, accountId, fields.username)
    if (holder !== undefined && holder.id !== self) throw usernameTaken(fields.username)
  }
  if (fields.petstoreId !== undefined) {
    const holder = await userIdOfPetstoreId(db, accountId, fields.petstoreId)
    if (holder !== undefined && holder !== self) throw petstoreIdTaken(fields.petstoreId)
  }
}

/** A write that lost a race for a username or v2 id (PostgreSQL) answers as if it had been taken before. */
async function orConflict<T>(fields: UserFields, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    const column = uniqueConflictOf(error)
    if (column === 'username' && fields.username != null) throw usernameTaken(fields.username)
    if (column === 'petstore_id' && fields.petstoreId !== undefined) throw petstoreIdTaken(fields.petstoreId)
    if (column !== undefined) {
      throw new ApiError('concurrent_change', 'Another request created a user at the same moment; retry.', {
        headers: { 'retry-after': '1' },
      })
    }
    throw error
  }
}

/**
 * Creates a user. Its v2 id is `fields.petstoreId` when the client chose one (409 when another
 * user has it), else `id`, reserved (database.ids.reserve(accountId, 'user')) before the
 * transaction `db` began.
 */
export async function createUser(
  db: Db,
  accountId: string,
  fields: UserFields & { name: string },
  id: ReservedId | undefined,
): Promise<User> {
  await assertFree(db, accountId, fields)
  const at = nowIso()
  const insert = (n: number) => orConflict(fields, () => insertUser(db, accountId, n, fields, at))
  let user: User | undefined
  if (fields.petstoreId !== undefined) {
    user = await insert(fields.petstoreId)
    // A concurrent create took it between the check and the insert.
    if (user === undefined) throw petstoreIdTaken(fields.petstoreId)
  } else if (id !== undefined) {
    user = await id.insert(db, insert)
  } else {
    throw new Error('createUser needs a reserved id when the client chose none.')
  }
  await recordEvent(db, { accountId, type: 'user.created', objectId: user.id, object: toUserV1(user), at })
  return user
}

/**
 * The Petstore's create (`POST /v2/user`, `createWithArray|List`): a user by that username is
 * created, or, when the account has one, replaced by these fields (what the Petstore does, and
 * what lets a client's test suite run twice).
 */
export async function saveUserByUsername(
  db: Db,
  accountId: string,
  fields: UserFields & { username: string; name: string },
  id: ReservedId | undefined,
): Promise<{ user: User; created: boolean }> {
  const existing = await findUserByUsername(db, accountId, fields.username)
  if (existing === undefined) return { user: await createUser(db, accountId, fields, id), created: true }
  return { user: await updateUser(db, accountId, existing.id, fields), created: false }
}

function usernameNotFound(username: string, param: string): ApiError {
  return new ApiError(
    'user_not_found',
    `No user with username ${JSON.stringify(username)} exists in your account.`,
    { param },
  )
}

export async function getUserByUsername(
  db: Db,
  accountId: string,
  username: string,
  param = 'username',
): Promise<User> {
  const user = await findUserByUsername(db, accountId, username)
  if (user === undefined) throw usernameNotFound(username, param)
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
      // Names as v1 shows them (snake_case).
      const previous = Object.fromEntries(
        Object.entries(before)
          .filter(([key]) => !NOT_IN_EVENTS.has(key))
          .map(([key, value]) => [EVENT_NAMES[key] ?? key, value]),
      )
      if (Object.keys(changes).length === 0) return current
      await assertFree(db, accountId, changes, id)
      const at = nowIso()
      const updated = await orConflict(changes, () =>
        updateUserAtVersion(db, accountId, id, current.version, changes, at),
      )
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
  return { users: page.rows, hasMore: page.hasMore }
}

export { findUser }

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
export async function hashUserPassword(
  password: string,
  accountId: string,
  signal?: AbortSignal,
): Promise<string> {
  try {
    return await hashPassword(password, { account: accountId }, signal)
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
/** For a sandbox's reset, after its pets. */
export {
  countUsers,
  deleteAllUsersOfAccount,
  listUserNames,
  listUsers,
  userNamesByIds,
} from './users-repository.ts'
