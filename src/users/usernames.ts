import { describePattern } from '../errors/validation-errors.ts'

/**
 * What a username may be. It names a user in a URL path (`/v2/user/{username}`), so it keeps to
 * the characters a path segment carries without escaping (RFC 3986 §3.3: the unreserved ones,
 * plus `@` so that an email address works as a username), is not made of dots alone (`.` and
 * `..` are path syntax), and is not the name of a Petstore operation that shares the path.
 * Usernames are case-sensitive, as the Petstore's are.
 */
export const USERNAME_MAX_LENGTH = 64

/** At least one character that is not a dot; every character unreserved or `@`. */
export const USERNAME_PATTERN = '^[A-Za-z0-9._~@-]*[A-Za-z0-9_~@-][A-Za-z0-9._~@-]*$'

/** The same, or empty (v1, where an empty value clears the username). */
export const USERNAME_OR_EMPTY_PATTERN = `${USERNAME_PATTERN}|^$`

/**
 * `GET /v2/user/login` and `/logout` are operations, and `POST /v2/user/createWithArray|List`
 * share the path too: a user by one of these names could not be read at `/v2/user/{username}`.
 */
export const RESERVED_USERNAMES: readonly string[] = ['login', 'logout', 'createWithArray', 'createWithList']

const PATTERN = new RegExp(USERNAME_PATTERN)
const CHARACTERS_RULE = 'takes letters, digits and . _ ~ @ - only (and not dots alone)'
describePattern(USERNAME_PATTERN, CHARACTERS_RULE)
describePattern(USERNAME_OR_EMPTY_PATTERN, CHARACTERS_RULE)

/** Why `username` cannot be a new username, or undefined when it can. */
export function usernameProblem(username: string): string | undefined {
  if (username.length === 0 || username.length > USERNAME_MAX_LENGTH) {
    return `a username has 1 to ${USERNAME_MAX_LENGTH} characters`
  }
  if (!PATTERN.test(username)) {
    return `a username ${CHARACTERS_RULE}`
  }
  if (RESERVED_USERNAMES.includes(username)) {
    return `"${username}" names an operation of /v2/user; choose another username`
  }
  return undefined
}
