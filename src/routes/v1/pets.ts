import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { runAtomicWrite } from '../../db/atomic-write.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { assertOneCursor, emptyToNull } from '../../http/replies.ts'
import type { Pet, PetFields } from '../../pets/pet.ts'
import { toPetV1 } from '../../pets/pet-views.ts'
import {
  deletePet,
  getPet,
  listPets,
  type PetListQuery,
  petCreation,
  petNotFound,
  updatePet,
} from '../../pets/pets-service.ts'
import { API_KEY_SECURITY, problemResponses } from '../../schemas/common.ts'
import { createOnceAtomic, IdempotencyHeaders } from '../idempotent-create.ts'
import { parseId } from '../ids.ts'
import {
  CreatePetBody,
  DeletedPetSchema,
  ListPetsQuery,
  PetIdParams,
  PetListSchema,
  PetV1Schema,
  UpdatePetBody,
} from './pet-schemas.ts'

const tags = ['v1-pet']

/**
 * preValidation hook: the `id` path parameter by the API's one int64 rule (routes/ids.ts),
 * read before validation coerces it: 400 unless digits within int64, 404 for one no pet can have.
 */
async function checkIdParam(request: FastifyRequest): Promise<void> {
  parseId((request.params as { id?: unknown }).id, 'id', petNotFound)
}
const security = API_KEY_SECURITY

function fieldsFromV1(body: Static<typeof UpdatePetBody>): PetFields {
  const fields: PetFields = {}
  if (body.name !== undefined) fields.name = body.name
  if (body.owner_id !== undefined) fields.ownerId = emptyToNull(body.owner_id)
  if (body.species !== undefined) fields.species = emptyToNull(body.species)
  if (body.breed !== undefined) fields.breed = emptyToNull(body.breed)
  if (body.status !== undefined) fields.status = body.status
  return fields
}

const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'ETag of the version this change is based on (412 if stale).' }),
  ),
})

export async function v1PetRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, database } = app.deps

  app.post(
    '/pet',
    {
      config: { scope: 'write:pets' },
      schema: {
        operationId: 'createPet',
        summary: 'Create a pet',
        description:
          'Takes form fields (`-d name=Rex`) or a JSON object. Answers 201 with the pet and its `Location`.',
        tags,
        security,
        headers: IdempotencyHeaders,
        body: CreatePetBody,
        response: { 201: PetV1Schema, ...problemResponses(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal!
      const id = await database.ids.reserve(accountId, 'pet')
      // Object.assign, not spreads: see prepareQuery (src/db/prepared-query.ts).
      const fields = Object.assign(fieldsFromV1(request.body), { name: request.body.name })
      const creation = Object.assign(petCreation(accountId, fields, id), {
        respond: (pet: Pet) => ({
          status: 201,
          headers: { location: `/v1/pet/${pet.id}`, etag: etagFor(pet.version) },
          body: toPetV1(pet),
        }),
      })
      return createOnceAtomic(db, request, reply, '/v1/pet', creation)
    },
  )

  app.get(
    '/pet/:id',
    {
      config: { scope: 'read:pets' },
      preValidation: checkIdParam,
      schema: {
        operationId: 'getPet',
        summary: 'Get a pet',
        tags,
        security,
        params: PetIdParams,
        response: { 200: PetV1Schema, ...problemResponses(404) },
      },
    },
    async (request, reply) => {
      const pet = await getPet(db, request.principal!.accountId, request.params.id)
      reply.header('etag', etagFor(pet.version))
      return toPetV1(pet)
    },
  )

  app.patch(
    '/pet/:id',
    {
      config: { scope: 'write:pets' },
      preValidation: checkIdParam,
      schema: {
        operationId: 'updatePetV1',
        summary: 'Update some fields of a pet',
        description:
          'Only the fields sent change. An empty value (or null) clears owner_id, species or breed.',
        tags,
        security,
        params: PetIdParams,
        headers: IfMatchHeaders,
        body: UpdatePetBody,
        response: { 200: PetV1Schema, ...problemResponses(404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const pet = await runAtomicWrite(db, (trx) =>
        updatePet(trx, request.principal!.accountId, request.params.id, fieldsFromV1(request.body), ifMatch),
      )
      reply.header('etag', etagFor(pet.version))
      return toPetV1(pet)
    },
  )

  app.delete(
    '/pet/:id',
    {
      config: { scope: 'write:pets' },
      preValidation: checkIdParam,
      schema: {
        operationId: 'deletePetV1',
        summary: 'Delete a pet',
        tags,
        security,
        params: PetIdParams,
        headers: IfMatchHeaders,
        response: {
          200: DeletedPetSchema,
          ...problemResponses(404, 412),
        },
      },
    },
    async (request) => {
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const pet = await runAtomicWrite(db, (trx) =>
        deletePet(trx, request.principal!.accountId, request.params.id, ifMatch),
      )
      return { id: pet.id, object: 'pet' as const, deleted: true as const }
    },
  )

  app.get(
    '/pet',
    {
      config: { scope: 'read:pets' },
      schema: {
        operationId: 'listPets',
        summary: 'List pets, newest first',
        description:
          'Keyset pagination: pass the last id of a page as `starting_after` for the next one; the cost of a page does not grow with depth.',
        tags,
        security,
        querystring: ListPetsQuery,
        response: { 200: PetListSchema, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query
      assertOneCursor(q.starting_after, q.ending_before)
      // Set one by one, not spread in: see prepareQuery (src/db/prepared-query.ts).
      const query: PetListQuery = { limit: q.limit }
      if (q.starting_after !== undefined) query.startingAfter = q.starting_after
      if (q.ending_before !== undefined) query.endingBefore = q.ending_before
      if (q.status !== undefined) query.status = [q.status]
      if (q.species !== undefined) query.species = q.species
      if (q.owner_id !== undefined) query.ownerId = q.owner_id
      const page = await listPets(db, request.principal!.accountId, query)
      return { object: 'list' as const, data: page.pets.map(toPetV1), has_more: page.hasMore, url: '/v1/pet' }
    },
  )
}
