import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { runAtomicWrite } from '../../db/atomic-write.ts'
import { ApiError } from '../../errors/api-error.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import type { StoredResponse } from '../../idempotency/idempotency.ts'
import type { Pet, PetFields } from '../../pets/pet.ts'
import { PET_STATUSES, type PetStatus } from '../../pets/pet-status.ts'
import {
  deletePet,
  findPetsByStatus,
  findPetsByTags,
  getPet,
  petCreation,
  petNotFound,
  savePetWithId,
  updatePet,
} from '../../pets/pets-service.ts'
import { createOnce, createOnceAtomic, IdempotencyHeaders } from '../idempotent-create.ts'
import { exactIdOf, invalidId, parseId, parseNewId } from '../ids.ts'
import { assertJson, assertValid, splitList } from './assertions.ts'
import { API_KEY_HEADER, oauthScope } from './authentication.ts'
import { fieldsFromV2, type PetInput } from './pet-input.ts'
import {
  FIND_VALUES_LIMIT,
  FindByStatusQuery,
  FindByTagsQuery,
  PetFormBody,
  PetIdV2Params,
  PetV2Body,
} from './pet-schemas.ts'
import { type ApiResponse, toPetV2 } from './pet-views.ts'
import { v2Problems } from './problems.ts'

const tags = ['pet']

/** At most this many pets in one findByStatus / findByTags answer (the Petstore does not page). */
export const FIND_LIMIT = 1000

/**
 * preValidation hook: the `petId` path parameter by the int64 rule (routes/ids.ts), read before
 * validation coerces it to a float that would blur ids past 2^53. Any id that passes is safe, so
 * the route reads the validated `request.params.petId` as is.
 */
export async function checkPetIdParam(request: FastifyRequest): Promise<void> {
  parseId((request.params as { petId?: unknown }).petId, 'petId', petNotFound)
}

export async function v2PetRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.post(
    '/pet',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: async (request) => assertJson(request, 'pet'),
      schema: {
        operationId: 'addPet',
        summary: 'Add a new pet to the store',
        description:
          'Answers 200 with the pet as stored (the Petstore declares 200). With an `id` (1 to 2^53 − 1, per account), creates the pet with that id, or replaces your pet with that id as PUT does (the same rules; its version moves on); without one (or null), the id is assigned. 400 "Invalid ID supplied" for an id out of range. Takes `Idempotency-Key`.',
        tags,
        security: [oauthScope('write:pets')],
        headers: IdempotencyHeaders,
        body: PetV2Body,
        response: { 200: Type.Ref('Pet'), ...v2Problems(400, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const body = request.body
      const sent =
        body !== null && typeof body === 'object' && !Array.isArray(body) ? exactIdOf(body) : undefined
      const chosen = sent == null ? undefined : parseNewId(sent, 'id')
      assertValid(request)
      const accountId = request.principal!.accountId
      const fields = fieldsFromV2(body as PetInput)
      const respond = (pet: Pet): StoredResponse => ({
        status: 200,
        headers: { etag: etagFor(pet.version), location: `/v2/pet/${pet.id}` },
        body: toPetV2(pet),
      })
      if (chosen === undefined) {
        // Reserved before the transaction opens (see src/db/account-ids.ts).
        const id = await database.ids.reserve(accountId, 'pet')
        // One statement on PostgreSQL, the Idempotency-Key's claim included. Object.assign, not
        // a spread: see prepareQuery (src/db/prepared-query.ts).
        const creation = Object.assign(petCreation(accountId, fields, id), { respond })
        return createOnceAtomic(db, request, reply, '/v2/pet', creation)
      }
      return createOnce(db, request, reply, '/v2/pet', async (trx) =>
        respond((await savePetWithId(trx, accountId, chosen, fields)).pet),
      )
    },
  )

  app.put(
    '/pet',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: async (request) => assertJson(request, 'pet'),
      schema: {
        operationId: 'updatePet',
        summary: 'Update an existing pet',
        description:
          'Replaces the Petstore fields of the pet named by `id` (absent `category`, `tags`, `status` are cleared from the v2 view); `ownerId`, `species` and `breed` change only when sent. 400 "Invalid ID supplied", 404 "Pet not found", 422 "Validation exception" with `errors`. Takes `If-Match`.',
        tags,
        security: [oauthScope('write:pets')],
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: PetV2Body,
        response: { 200: Type.Ref('Pet'), ...v2Problems(400, 404, 409, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const body = request.body as Partial<PetInput> | null
      const sent =
        body !== null && typeof body === 'object' && !Array.isArray(body) ? exactIdOf(body) : undefined
      // The id must be a JSON number: "12" (a string) is refused like 1.5.
      if (typeof sent !== 'number' && typeof sent !== 'bigint') throw invalidId('id')
      const id = parseId(sent, 'id', petNotFound)
      assertValid(request)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const pet = await runAtomicWrite(db, (trx) =>
        updatePet(trx, request.principal!.accountId, id, fieldsFromV2(body as PetInput), ifMatch),
      )
      reply.header('etag', etagFor(pet.version))
      return toPetV2(pet)
    },
  )

  app.get(
    '/pet/findByStatus',
    {
      config: { scope: 'read:pets' },
      schema: {
        operationId: 'findPetsByStatus',
        summary: 'Finds pets by status',
        description: `Repeat \`status\` or send a comma-separated list. Oldest first, at most ${FIND_LIMIT}.`,
        tags,
        security: [oauthScope('read:pets')],
        querystring: FindByStatusQuery,
        response: { 200: Type.Array(Type.Ref('Pet')), ...v2Problems() },
      },
    },
    async (request) => {
      const statuses = splitList(request.query.status, 'status', FIND_VALUES_LIMIT)
      const bad = statuses.filter((s) => !(PET_STATUSES as readonly string[]).includes(s))
      if (bad.length > 0 || statuses.length === 0) {
        throw new ApiError(
          'parameter_invalid',
          `Invalid status value ${bad.map((s) => JSON.stringify(s)).join(', ') || '(empty)'}: use ${PET_STATUSES.join(', ')}.`,
          { param: 'status' },
        )
      }
      const unique = [...new Set(statuses)] as PetStatus[]
      const pets = await findPetsByStatus(db, request.principal!.accountId, unique, FIND_LIMIT)
      return pets.map(toPetV2)
    },
  )

  app.get(
    '/pet/findByTags',
    {
      config: { scope: 'read:pets' },
      schema: {
        operationId: 'findPetsByTags',
        summary: 'Finds pets by tags',
        description: `Pets with at least one of the tag names. Repeat \`tags\` or send a comma-separated list. Oldest first, at most ${FIND_LIMIT}.`,
        tags,
        security: [oauthScope('read:pets')],
        querystring: FindByTagsQuery,
        response: { 200: Type.Array(Type.Ref('Pet')), ...v2Problems() },
      },
    },
    async (request) => {
      const names = [...new Set(splitList(request.query.tags, 'tags', FIND_VALUES_LIMIT))]
      if (names.length === 0) {
        throw new ApiError('parameter_invalid', 'Send at least one tag name in `tags`.', { param: 'tags' })
      }
      const pets = await findPetsByTags(db, request.principal!.accountId, names, FIND_LIMIT)
      return pets.map(toPetV2)
    },
  )

  app.get(
    '/pet/:petId',
    {
      attachValidation: true,
      config: { scope: 'read:pets', apiKeyHeader: true },
      preValidation: checkPetIdParam,
      schema: {
        operationId: 'getPetById',
        summary: 'Find pet by ID',
        description: 'Takes an OAuth token or an API key in the `api_key` header.',
        tags,
        security: [API_KEY_HEADER, oauthScope('read:pets')],
        params: PetIdV2Params,
        response: { 200: Type.Ref('Pet'), ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const pet = await getPet(db, request.principal!.accountId, request.params.petId)
      reply.header('etag', etagFor(pet.version))
      return toPetV2(pet)
    },
  )

  app.post(
    '/pet/:petId',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: checkPetIdParam,
      schema: {
        operationId: 'updatePetWithForm',
        summary: 'Updates a pet in the store with form data',
        tags,
        security: [oauthScope('write:pets')],
        consumes: ['application/x-www-form-urlencoded'],
        params: PetIdV2Params,
        body: PetFormBody,
        response: { 200: Type.Ref('Pet'), ...v2Problems(404, 409, 415) },
      },
    },
    async (request, reply) => {
      if (request.validationError !== undefined) throw request.validationError
      const fields: PetFields = {}
      if (request.body.name !== undefined) fields.name = request.body.name
      if (request.body.status !== undefined) {
        fields.status = request.body.status
        fields.statusOmitted = false
      }
      const pet = await runAtomicWrite(db, (trx) =>
        updatePet(trx, request.principal!.accountId, request.params.petId, fields),
      )
      reply.header('etag', etagFor(pet.version))
      return toPetV2(pet)
    },
  )

  app.delete(
    '/pet/:petId',
    {
      attachValidation: true,
      config: { scope: 'write:pets', apiKeyHeader: true },
      preValidation: checkPetIdParam,
      schema: {
        operationId: 'deletePet',
        summary: 'Deletes a pet',
        description: 'Takes an OAuth token or an API key in the `api_key` header, and `If-Match`.',
        tags,
        security: [API_KEY_HEADER, oauthScope('write:pets')],
        params: PetIdV2Params,
        headers: Type.Object({
          api_key: Type.Optional(Type.String()),
          'if-match': Type.Optional(Type.String()),
        }),
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 412) },
      },
    },
    async (request): Promise<ApiResponse> => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const { petId } = request.params
      const pet = await runAtomicWrite(db, (trx) =>
        deletePet(trx, request.principal!.accountId, petId, ifMatch),
      )
      return { code: 200, type: 'unknown', message: String(pet.id) }
    },
  )
}
