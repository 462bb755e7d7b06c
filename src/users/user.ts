/** A pet owner inside an account. */
export interface User {
  id: string
  accountId: string
  name: string
  email: string | null
  phone: string | null
  version: number
  createdAt: string
  updatedAt: string
  /** Internal creation order (v1's list cursors); never shown. */
  seq: number
  /** The integer id the v2 (Petstore) API shows; unique in the account. */
  petstoreId: number
  /** Unique in the account when set (usernames.ts says what it may be). */
  username: string | null
  firstName: string | null
  lastName: string | null
  /** scrypt hash of the v2 `password`; never shown. */
  passwordHash: string | null
  userStatus: number | null
}

export interface UserFields {
  petstoreId?: number
  name?: string
  email?: string | null
  phone?: string | null
  username?: string | null
  firstName?: string | null
  lastName?: string | null
  passwordHash?: string | null
  userStatus?: number | null
}

export interface UserV1 {
  id: string
  object: 'user'
  name: string
  username: string | null
  email: string | null
  phone: string | null
  version: number
  created_at: string
  updated_at: string
}

export function toUserV1(user: User): UserV1 {
  return {
    id: user.id,
    object: 'user',
    name: user.name,
    username: user.username,
    email: user.email,
    phone: user.phone,
    version: user.version,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  }
}
