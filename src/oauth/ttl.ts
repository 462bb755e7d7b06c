/** Lifetimes, in seconds. Access tokens are short: they are verified without the database. */
export const TTL = {
  accessToken: 3600,
  authorizationCode: 60,
  refreshToken: 14 * 24 * 3600,
  interaction: 3600,
  session: 14 * 24 * 3600,
  grant: 14 * 24 * 3600,
} as const
