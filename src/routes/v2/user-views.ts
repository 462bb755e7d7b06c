import type { User } from '../../users/user.ts'

/** The Petstore's User: the integer `id` is the user's v2 id in its account; unset fields are left out. */
export interface UserV2 {
  id: number
  username?: string
  firstName?: string
  lastName?: string
  email?: string
  phone?: string
  userStatus?: number
}

export function toUserV2(user: User): UserV2 {
  const out: UserV2 = { id: user.petstoreId }
  if (user.username !== null) out.username = user.username
  if (user.firstName !== null) out.firstName = user.firstName
  if (user.lastName !== null) out.lastName = user.lastName
  if (user.email !== null) out.email = user.email
  if (user.phone !== null) out.phone = user.phone
  if (user.userStatus !== null) out.userStatus = user.userStatus
  return out
}
