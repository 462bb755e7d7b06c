import type { Selectable, Updateable } from 'kysely'
import { keysetPageOf, type Page } from '../db/keyset-page.ts'
import type { Db, UsersTable } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import type { User, UserFields } from './user.ts'

function toUser(row: Selectable<UsersTable>): User {
  return {
    seq: row.seq,
    petstoreId: row.petstore_id,
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    passwordHash: row.password_hash,
    userStatus: row.user_status,
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

const COLUMNS = [
  'seq',
  'petstore_id',
  'id',
  'account_id',
  'name',
  'email',
  'phone',
  'version',
  'created_at',
  'updated_at',
  'username',
  'first_name',
  'last_name',
  'password_hash',
  'user_status',
] as const

function toColumns(fields: UserFields): Updateable<UsersTable> {
  const out: Updateable<UsersTable> = {}
  if (fields.petstoreId !== undefined) out.petstore_id = fields.petstoreId
  if (fields.name !== undefined) out.name = fields.name
  if (fields.email !== undefined) out.email = fields.email
  if (fields.phone !== undefined) out.phone = fields.phone
  if (fields.username !== undefined) out.username = fields.username
  if (fields.firstName !== undefined) out.first_name = fields.firstName
  if (fields.lastName !== undefined) out.last_name = fields.lastName
  if (fields.passwordHash !== undefined) out.password_hash = fields.passwordHash
  if (fields.userStatus !== undefined) out.user_status = fields.userStatus
  return out
}

/** Inserts the user with v2 id `petstoreId`; undefined when the account already has a user with that id. */
export async function insertUser(
  db: Db,
  accountId: string,
  petstoreId: number,
  fields: UserFields & { name: string },
  at: string,
): Promise<User | undefined> {
  const row = await db
    .insertInto('users')
    .values({
      id: newId('usr'),
      petstore_id: petstoreId,
      account_id: accountId,
      name: fields.name,
      email: fields.email ?? null,
      phone: fields.phone ?? null,
      username: fields.username ?? null,
      first_name: fields.firstName ?? null,
      last_name: fields.lastName ?? null,
      password_hash: fields.passwordHash ?? null,
      user_status: fields.userStatus ?? null,
      version: 1,
      created_at: at,
      updated_at: at,
    })
    // Taken (a client chose the id, or a concurrent create did): nothing inserted, and on
    // PostgreSQL the transaction stays usable (src/db/account-ids.ts).
    .onConflict((oc) => oc.columns(['account_id', 'petstore_id']).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst()
  return row === undefined ? undefined : toUser(row)
}

export async function findUser(db: Db, accountId: string, id: string): Promise<User | undefined> {
  const row = await db
    .selectFrom('users')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return row === undefined ? undefined : toUser(row)
}

export async function updateUserAtVersion(
  db: Db,
  accountId: string,
  id: string,
  version: number,
  fields: UserFields,
  at: string,
): Promise<User | undefined> {
  const row = await db
    .updateTable('users')
    .set({ ...toColumns(fields), version: version + 1, updated_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('version', '=', version)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row === undefined ? undefined : toUser(row)
}

export async function deleteUserAtVersion(
  db: Db,
  accountId: string,
  id: string,
  version: number,
): Promise<boolean> {
  const result = await db
    .deleteFrom('users')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('version', '=', version)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The user of the account with this username. */
export async function findUserByUsername(
  db: Db,
  accountId: string,
  username: string,
): Promise<User | undefined> {
  const row = await db
    .selectFrom('users')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('username', '=', username)
    .executeTakeFirst()
  return row === undefined ? undefined : toUser(row)
}

/** The usr_ id of the account's user with this v2 id, if any. */
export async function userIdOfPetstoreId(
  db: Db,
  accountId: string,
  petstoreId: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('petstore_id', '=', petstoreId)
    .executeTakeFirst()
  return row?.id
}

export interface UserListQuery {
  limit: number
  startingAfter?: string
  endingBefore?: string
  email?: string
}

/** Newest first, keyset on the internal sequence; undefined when a cursor names no user here. */
export function listUsers(db: Db, accountId: string, query: UserListQuery): Promise<Page<User> | undefined> {
  const ofAccount = db.selectFrom('users').where('account_id', '=', accountId)
  const select = (users: typeof ofAccount) =>
    users.select(COLUMNS).$if(query.email !== undefined, (q) => q.where('email', '=', query.email!))
  return keysetPageOf(ofAccount, query, select, toUser)
}

/** How many users the account has (the dashboard's overview). */
export async function countUsers(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Users' names by id, for the owner column and filter (the first `limit` by name). */
export async function listUserNames(
  db: Db,
  accountId: string,
  limit = 200,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .limit(limit)
    .execute()
}

export async function userNamesByIds(db: Db, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute()
  return new Map(rows.map((r) => [r.id, r.name]))
}

/**
 * The unique column a failed write collided on, when it did: two requests that each found a
 * username (or v2 id) free and then both wrote it (PostgreSQL runs them at once; the second
 * insert fails on the unique index, and its transaction with it).
 */
export function uniqueConflictOf(error: unknown): 'username' | 'petstore_id' | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown }
  if (code === '23505') {
    if (constraint === 'users_account_username') return 'username'
    if (constraint === 'users_account_petstore_id') return 'petstore_id'
  }
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string') {
    if (message.includes('users.username')) return 'username'
    if (message.includes('users.petstore_id')) return 'petstore_id'
  }
  return undefined
}

/** Deletes every user of the account; its pets must be gone first (they name their owner). */
export async function deleteAllUsersOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('users').where('account_id', '=', accountId).execute()
}
