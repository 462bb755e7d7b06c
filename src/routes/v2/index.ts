import multipart from '@fastify/multipart'
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import secureJson from 'secure-json-parse'
import { isEmptyBodyOfBodilessMethod } from '../../http/json-body.ts'
import type { RateLimiter } from '../../http/rate-limiter.ts'
import { registerValidation } from '../../http/validation.ts'
import type { KeyAuthenticator } from '../../keys/keys-service.ts'
import type { OAuthServer } from '../../oauth/oauth-server.ts'
import { rememberExactId } from '../ids.ts'
import { bearerAuthentication } from './authentication.ts'
import { ORDER_V2_SCHEMAS } from './order-schemas.ts'
import { UPLOAD_LIMIT_BYTES, v2PetImageRoutes } from './pet-images.ts'
import { PET_V2_SCHEMAS } from './pet-schemas.ts'
import { v2PetRoutes } from './pets.ts'
import { v2StoreRoutes } from './store.ts'
import { v2UserBatchRoutes } from './user-batches.ts'
import { USER_V2_SCHEMAS } from './user-schemas.ts'
import { v2UserSessionRoutes } from './user-sessions.ts'
import { v2UserRoutes } from './users.ts'

export interface V2ApiOptions {
  oauth: OAuthServer
  keys: KeyAuthenticator
  /** Failed authentications per client address (shared with v1's API keys). */
  failedAttempts?: RateLimiter
  /** The per-account rate limit hook, when rate limiting is on. */
  rateLimit?: onRequestAsyncHookHandler
}

/**
 * The Swagger Petstore v2 compatible API, mounted at /v2 by app.ts (no route depends on where):
 * JSON in and out, OAuth 2.0 bearer tokens (and the Petstore's `api_key` header where it
 * declares one), over the same domain services as v1.
 */
export async function v2Api(v2: FastifyInstance, options: V2ApiOptions): Promise<void> {
  // Shared schemas (Pet, User, …) live in this scope only: adding them at the root would
  // reach the v1 scopes and make Fastify rebuild their validators with its defaults
  // (schema-controller.js). The same no-coercion body validator is set here again.
  for (const schema of [...PET_V2_SCHEMAS, ...USER_V2_SCHEMAS, ...ORDER_V2_SCHEMAS]) v2.addSchema(schema)
  registerValidation(v2)
  // A PUT's int64 id is checked on its digits, not on a float (see routes/ids.ts).
  v2.removeContentTypeParser('application/json')
  v2.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body)
    if (isEmptyBodyOfBodilessMethod(request, text)) {
      done(null, undefined)
      return
    }
    if (text.trim() === '') {
      done(
        Object.assign(new Error('empty JSON body'), {
          code: 'FST_ERR_CTP_EMPTY_JSON_BODY',
          statusCode: 400,
        }),
      )
      return
    }
    try {
      // `__proto__` keys are dropped. Not with a JSON.parse reviver: V8 applies it
      // recursively, and a body nested a few thousand deep overflows the stack.
      const parsed = secureJson.parse(text, { protoAction: 'remove', constructorAction: 'ignore' })
      rememberExactId(parsed, text)
      done(null, parsed)
    } catch (error) {
      done(error as Error)
    }
  })
  await v2.register(multipart, {
    limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 10, parts: 20 },
  })
  v2.addHook(
    'onRequest',
    bearerAuthentication({
      verifier: options.oauth.verifier,
      keys: options.keys,
      ...(options.failedAttempts === undefined ? {} : { failedAttempts: options.failedAttempts }),
    }),
  )
  if (options.rateLimit !== undefined) v2.addHook('onRequest', options.rateLimit)
  await v2.register(v2PetRoutes)
  await v2.register(v2PetImageRoutes, { publicUrl: options.oauth.issuer })
  await v2.register(v2StoreRoutes)
  await v2.register(v2UserRoutes)
  await v2.register(v2UserBatchRoutes)
  await v2.register(v2UserSessionRoutes)
}
