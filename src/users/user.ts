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
  /** Internal sequence number; the v2 (Petstore) API shows it as the int64 user id. */
  seq: number
  /** Petstore v2 fields; null when never set. */
  username: string | null
  firstName: string | null
  lastName: string | null
  /** scrypt hash of the v2 `password`; never shown. */
  passwordHash: string | null
  userStatus: number | null
}

export interface UserFields {
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
    email: user.email,
    phone: user.phone,
    version: user.version,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  }
}
