import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { findAccountById, modeOf } from '../../accounts/accounts-service.ts'
import { API_KEY_SECURITY, Nullable, problemResponses, StringEnum } from '../../schemas/common.ts'

export const AccountV1Schema = Type.Object(
  {
    id: Type.String({ examples: ['acct_0GZr7bXk9QqT2mV8wLp4'] }),
    object: Type.Literal('account'),
    mode: StringEnum(['live', 'sandbox'] as const, {
      description:
        "`sandbox`: a sandbox's test data, reached with `pet_sk_test_` keys; `live`: the account's real data.",
    }),
    live_account_id: Nullable(
      Type.String({ description: 'For a sandbox, the live account it belongs to; null for a live account.' }),
    ),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
)

/**
 * `GET /v1/account`: the account the calling key belongs to, and whether that is live or a
 * sandbox. Any valid key may ask (it needs no scope): a tool checks which data it is about to
 * touch, and keeps what it stores per account (petctl's listen secret).
 */
export async function v1AccountRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps
  app.get(
    '/account',
    {
      schema: {
        operationId: 'getAccount',
        summary: "The calling key's account",
        tags: ['v1-account'],
        security: API_KEY_SECURITY,
        response: { 200: AccountV1Schema, ...problemResponses() },
      },
    },
    async (request) => {
      const account = await findAccountById(db, request.principal!.accountId)
      // The key was just authenticated, and deleting an account deletes its keys.
      if (account === undefined) throw new Error('an authenticated key without an account')
      return {
        id: account.id,
        object: 'account' as const,
        mode: modeOf(account),
        live_account_id: account.live_account_id,
        created_at: account.created_at,
      }
    },
  )
}
