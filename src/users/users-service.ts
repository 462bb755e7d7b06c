import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { recordEvent } from '../events/events-repository.ts'
import type { IfMatch } from '../http/etag.ts'
import { writeAtCurrentVersion } from '../lib/optimistic.ts'
import { nowIso } from '../lib/time.ts'
import { countPetsOfOwner } from '../pets/pets-repository.ts'
import { toUserV1, type User, type UserFields } from './user.ts'
import {
  deleteUserAtVersion,
  findUser,
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
      const changes: UserFields = {}
      const previous: Record<string, unknown> = {}
      for (const key of USER_FIELDS) {
        const next = fields[key]
        if (next === undefined || next === current[key]) continue
        ;(changes as Record<string, unknown>)[key] = next
        // Never copy a password hash into an event; other names as stored (snake_case).
        if (key !== 'passwordHash') previous[EVENT_NAMES[key] ?? key] = current[key]
      }
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

export async function deleteUser(db: Db, accountId: string, id: string, ifMatch?: IfMatch): Promise<User> {
  return writeAtCurrentVersion({
    load: () => findUser(db, accountId, id),
    missing: () => userNotFound(id),
    ifMatch,
    write: async (current) => {
      const pets = await countPetsOfOwner(db, accountId, id)
      if (pets > 0) {
        throw new ApiError(
          'user_has_pets',
          `User ${id} still owns ${pets} pet${pets === 1 ? '' : 's'}; reassign them (PATCH /v1/pet/{id} owner_id) or delete them first.`,
          { extensions: { pet_count: pets } },
        )
      }
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

// Reads for the dashboard's pages (src/dashboard/routes/data-routes.ts).
export { countUsers, findUser, listUserNames, listUsers, userNamesByIds } from './users-repository.ts'
