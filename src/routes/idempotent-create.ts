import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database, Db } from '../db/schema.ts'
import {
  type AtomicCreate,
  type IdempotentRequest,
  type IdempotentResult,
  requestFingerprint,
  runIdempotent,
  runIdempotentCreate,
  type StoredResponse,
  validateIdempotencyKey,
} from '../idempotency/idempotency.ts'

/** The `Idempotency-Key` request header of every create, v1 and v2 (README, Idempotent retries). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'Makes the POST safe to retry: the first response is replayed for 24 h.' }),
  ),
})

/**
 * Runs a create at most once per Idempotency-Key and sends its response (or the first one's
 * replay). `path` names the operation in the fingerprint, so a key reused on another operation
 * or with other parameters is refused. `params` is what the fingerprint covers: the body, unless
 * the route leaves a secret out (a fast hash of a password would be guessable).
 */
export async function createOnce(
  db: Kysely<Database>,
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
  work: (trx: Db) => Promise<StoredResponse>,
  params: unknown = request.body,
): Promise<FastifyReply> {
  return sendResult(reply, await runIdempotent(db, idempotentRequest(request, path, params), work))
}

/**
 * createOnce for a create that is one statement on PostgreSQL (createPet): there it runs without
 * a transaction, and claims an Idempotency-Key in that same statement (runIdempotentCreate).
 */
export async function createOnceAtomic<T>(
  db: Kysely<Database>,
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
  creation: AtomicCreate<T>,
): Promise<FastifyReply> {
  return sendResult(
    reply,
    await runIdempotentCreate(db, idempotentRequest(request, path, request.body), creation),
  )
}

function idempotentRequest(request: FastifyRequest, path: string, params: unknown): IdempotentRequest {
  const key = validateIdempotencyKey(request.headers['idempotency-key'])
  // Only a request that carries a key is ever compared with an earlier one: without a key the
  // hash of the canonical body would be computed for nothing.
  const fingerprint = key === undefined ? '' : requestFingerprint(request.method, path, params)
  return { accountId: request.principal!.accountId, key, fingerprint }
}

/** Sends what runIdempotent produced, marking replays as RFC-draft idempotency replays. */
export function sendResult(reply: FastifyReply, result: IdempotentResult): FastifyReply {
  reply.code(result.status).headers(result.headers)
  if (result.replayed) reply.header('idempotent-replayed', 'true')
  return reply.send(result.body)
}
