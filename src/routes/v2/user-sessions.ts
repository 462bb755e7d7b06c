import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { LOGIN_SESSION_SECONDS, logInUser } from '../../users/user-login.ts'
import { oauthScope, UNDECLARED_SECURITY } from './authentication.ts'
import { v2Problems } from './problems.ts'
import { LoginQuery } from './user-schemas.ts'
import { USER_TAGS } from './users.ts'

const INT32_MAX = 2_147_483_647

/**
 * The Petstore's `X-Rate-Limit`, "calls per hour allowed by the user": the account's sustained
 * rate limit (RATE_LIMIT_RPS) over an hour, at most int32's largest value (also when the limit
 * is off).
 */
export function callsPerHour(ratePerSecond: number): number {
  return ratePerSecond === 0 ? INT32_MAX : Math.min(INT32_MAX, ratePerSecond * 3600)
}

/**
 * The Petstore's login and logout. Signing in to the API is OAuth's job (the bearer token every
 * call carries); these check a user's password and answer the Petstore's shapes, and keep no
 * session: the session string grants nothing, and logout has nothing to end.
 */
export async function v2UserSessionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, config } = app.deps

  app.get(
    '/user/login',
    {
      config: { scope: 'read:users', ...UNDECLARED_SECURITY },
      schema: {
        operationId: 'loginUser',
        summary: 'Logs user into the system',
        description: `Checks the password of the user of your account with this username. Answers 200 with a session string (\`logged in user session:\` and random text: it grants nothing, every call still takes the bearer token), \`X-Rate-Limit\` (your account's calls per hour) and \`X-Expires-After\` (${LOGIN_SESSION_SECONDS / 60} minutes on). A wrong password and an unknown username both answer 400 "Invalid username/password supplied"; failed logins are limited (10 per username and 20 per address in 15 minutes, then 429).`,
        tags: USER_TAGS,
        security: [oauthScope('read:users')],
        querystring: LoginQuery,
        response: {
          200: Type.String({
            description: 'successful operation',
            headers: {
              'X-Rate-Limit': Type.Integer({
                format: 'int32',
                description: 'calls per hour allowed by the user',
              }),
              'X-Expires-After': Type.String({
                format: 'date-time',
                description: 'date in UTC when token expires',
              }),
            },
          }),
          ...v2Problems(),
          400: { ...Type.Ref('Problem'), description: 'Invalid username/password supplied' },
        },
      },
    },
    async (request, reply) => {
      const { username, password } = request.query
      const result = await logInUser(db, request.principal!.accountId, { username, password, ip: request.ip })
      reply
        .header('x-rate-limit', String(callsPerHour(config.rateLimitRps)))
        .header('x-expires-after', result.expiresAt)
        .type('application/json; charset=utf-8')
      return reply.send(JSON.stringify(result.session))
    },
  )

  app.get(
    '/user/logout',
    {
      config: { scope: 'read:users', ...UNDECLARED_SECURITY },
      schema: {
        operationId: 'logoutUser',
        summary: 'Logs out current logged in user session',
        description:
          'Nothing to end (login keeps no session); answers 200 `{"code":200,"type":"unknown","message":"ok"}`.',
        tags: USER_TAGS,
        security: [oauthScope('read:users')],
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems() },
      },
    },
    async () => ({ code: 200, type: 'unknown', message: 'ok' }),
  )
}
