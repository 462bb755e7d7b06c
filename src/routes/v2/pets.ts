import type { MultipartFile } from '@fastify/multipart'
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { validationException } from '../../errors/error-handler.ts'
import { quoteHeaderValue } from '../../errors/redact.ts'
import { etagFor, parseIfMatch } from '../../http/etag.ts'
import { addPetImage, assertCanUpload, IMAGE_LIMIT_BYTES, readImage } from '../../pets/images-service.ts'
import type { Category, PetFields, Tag } from '../../pets/pet.ts'
import { IMAGE_NAME_PATTERN } from '../../pets/pet-images.ts'
import { PET_STATUSES, type PetStatus } from '../../pets/pet-status.ts'
import {
  countPetsByStatus,
  createPet,
  deletePet,
  findPetsByStatus,
  findPetsByTags,
  getPet,
  updatePet,
} from '../../pets/pets-service.ts'
import {
  FIND_VALUES_LIMIT,
  FindByStatusQuery,
  FindByTagsQuery,
  InventorySchema,
  PetFormBody,
  PetIdV2Params,
  PetV2Body,
  UploadImageBody,
} from './pet-schemas.ts'
import { type ApiResponse, toPetV2 } from './pet-views.ts'
import { v2Problems } from './problems.ts'

const tags = ['pet']
const storeTags = ['store']
const OAUTH = (scope: string) => ({ petstore_auth: [scope] })
const API_KEY = { api_key: [] }

/** At most this many pets in one findByStatus / findByTags answer (the Petstore does not page). */
export const FIND_LIMIT = 1000
/** Largest image accepted by uploadImage. */
export const UPLOAD_LIMIT_BYTES = IMAGE_LIMIT_BYTES

const INT64_MAX = 2n ** 63n - 1n
const INT64_MIN = -(2n ** 63n)

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body as sent, for the v2 id check (precision beyond 2^53). */
    rawJson?: string
  }
}

/** The Petstore's 400 "Invalid ID supplied". */
function invalidId(what: string): ApiError {
  return new ApiError('invalid_id', `Invalid ID supplied: ${what} must be an integer within int64.`, {
    param: what,
  })
}

/** A pet id from text (path) or JSON; undefined when it is not an int64. Ids past 2^53 name no pet. */
function int64(value: unknown, raw?: string): number | undefined {
  let text: string
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return undefined
    text = raw ?? BigInt(value).toString()
  } else if (typeof value === 'string' && /^-?\d{1,30}$/.test(value)) text = value
  else return undefined
  const big = BigInt(text)
  if (big > INT64_MAX || big < INT64_MIN) return undefined
  return Number(big)
}

/** The digits of a top-level `"id": …` as sent, when JSON number precision could blur them. */
function rawBodyId(request: FastifyRequest, id: number): string | undefined {
  if (Number.isSafeInteger(id) || request.rawJson === undefined) return undefined
  for (const match of request.rawJson.matchAll(/"id"\s*:\s*(-?\d+)(?![.\deE])/g)) {
    if (Number(match[1]) === id) return match[1]
  }
  return undefined
}

function petIdParam(request: FastifyRequest): number {
  // The path segment as sent: validation coerces it to a float, which blurs ids past 2^53.
  const segment = decodeURIComponent(request.url.split('?')[0]?.split('/')[3] ?? '')
  const id = int64(segment)
  if (id === undefined) throw invalidId('petId')
  return existingId(id)
}

/** Ids are assigned from 1 up and stay below 2^53: any other valid int64 names no pet. */
function existingId(id: number): number {
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new ApiError('pet_not_found', `No pet with id ${id} exists in your account.`, { param: 'id' })
  }
  return id
}

interface PetInput {
  id?: number
  category?: Category | null
  name: string
  photoUrls: string[]
  tags?: Tag[] | null
  status?: PetStatus | null
  ownerId?: string | null
  species?: string | null
  breed?: string | null
}

/** The Petstore fields replace what is stored (absent: cleared); ownerId, species, breed change only when sent. */
function fieldsFromV2(body: PetInput): PetFields & { name: string } {
  const fields: PetFields & { name: string } = {
    name: body.name,
    photoUrls: body.photoUrls,
    category: body.category ?? null,
    tags: body.tags ?? null,
    statusOmitted: body.status == null,
  }
  if (body.status != null) fields.status = body.status
  if (body.ownerId !== undefined) fields.ownerId = body.ownerId === '' ? null : body.ownerId
  if (body.species !== undefined) fields.species = body.species === '' ? null : body.species
  if (body.breed !== undefined) fields.breed = body.breed === '' ? null : body.breed
  return fields
}

function assertJson(request: FastifyRequest): void {
  const type = request.headers['content-type'] ?? ''
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type ${quoteHeaderValue(type)} is not accepted here; send the pet as application/json.`,
    )
  }
}

/** 422 "Validation exception" listing every field at fault (the Petstore's PUT/POST contract). */
function assertValid(request: FastifyRequest): void {
  const validation = (
    request.validationError as { validation?: Parameters<typeof validationException>[0] } | undefined
  )?.validation
  if (validation !== undefined) throw validationException(validation)
}

/** The values of a repeated and/or comma-separated parameter; 400 past FIND_VALUES_LIMIT. */
function splitList(values: string[], param: string): string[] {
  const list = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
  if (list.length > FIND_VALUES_LIMIT) {
    throw new ApiError(
      'parameter_invalid',
      `Invalid query parameter \`${param}\`: send at most ${FIND_VALUES_LIMIT} values (${list.length} were sent).`,
      { param },
    )
  }
  return list
}

export interface V2PetRoutesOptions {
  /** Public base URL of the service, for the image URLs added to photoUrls. */
  publicUrl: string
}

export async function v2PetRoutes(fastify: FastifyInstance, options: V2PetRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, config } = app.deps

  app.post(
    '/pet',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: async (request) => assertJson(request),
      schema: {
        operationId: 'addPet',
        summary: 'Add a new pet to the store',
        description: 'Answers 200 with the pet as stored (the Petstore declares 200). Its `id` is assigned.',
        tags,
        security: [OAUTH('write:pets')],
        body: PetV2Body,
        response: { 200: Type.Ref('Pet'), ...v2Problems(400, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      assertValid(request)
      const body = request.body as PetInput
      const pet = await db
        .transaction()
        .execute((trx) => createPet(trx, request.principal!.accountId, fieldsFromV2(body)))
      reply.header('etag', etagFor(pet.version)).header('location', `/v2/pet/${pet.id}`)
      return toPetV2(pet)
    },
  )

  app.put(
    '/pet',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      preValidation: async (request) => assertJson(request),
      schema: {
        operationId: 'updatePet',
        summary: 'Update an existing pet',
        description:
          'Replaces the Petstore fields of the pet named by `id` (absent `category`, `tags`, `status` are cleared from the v2 view); `ownerId`, `species` and `breed` change only when sent. 400 "Invalid ID supplied", 404 "Pet not found", 422 "Validation exception" with `errors`. Takes `If-Match`.',
        tags,
        security: [OAUTH('write:pets')],
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: PetV2Body,
        response: { 200: Type.Ref('Pet'), ...v2Problems(400, 404, 409, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const body = request.body as Partial<PetInput> | null
      const rawId = body !== null && typeof body === 'object' && !Array.isArray(body) ? body.id : undefined
      if (rawId === undefined || rawId === null) throw invalidId('id')
      const id = int64(rawId, typeof rawId === 'number' ? rawBodyId(request, rawId) : undefined)
      if (id === undefined || typeof rawId !== 'number') throw invalidId('id')
      assertValid(request)
      existingId(id)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const pet = await db
        .transaction()
        .execute((trx) =>
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
        security: [OAUTH('read:pets')],
        querystring: FindByStatusQuery,
        response: { 200: Type.Array(Type.Ref('Pet')), ...v2Problems() },
      },
    },
    async (request) => {
      const statuses = splitList(request.query.status, 'status')
      const bad = statuses.filter((s) => !(PET_STATUSES as readonly string[]).includes(s))
      if (bad.length > 0 || statuses.length === 0) {
        throw new ApiError(
          'parameter_invalid',
          `Invalid status value ${bad.map((s) => JSON.stringify(s)).join(', ') || '(empty)'}: use ${PET_STATUSES.join(', ')}.`,
          { param: 'status' },
        )
      }
      const pets = await findPetsByStatus(
        db,
        request.principal!.accountId,
        [...new Set(statuses)] as PetStatus[],
        FIND_LIMIT,
      )
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
        security: [OAUTH('read:pets')],
        querystring: FindByTagsQuery,
        response: { 200: Type.Array(Type.Ref('Pet')), ...v2Problems() },
      },
    },
    async (request) => {
      const names = [...new Set(splitList(request.query.tags, 'tags'))]
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
      schema: {
        operationId: 'getPetById',
        summary: 'Find pet by ID',
        description: 'Takes an OAuth token or an API key in the `api_key` header.',
        tags,
        security: [API_KEY, OAUTH('read:pets')],
        params: PetIdV2Params,
        response: { 200: Type.Ref('Pet'), ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const pet = await getPet(db, request.principal!.accountId, petIdParam(request))
      reply.header('etag', etagFor(pet.version))
      return toPetV2(pet)
    },
  )

  app.post(
    '/pet/:petId',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      schema: {
        operationId: 'updatePetWithForm',
        summary: 'Updates a pet in the store with form data',
        tags,
        security: [OAUTH('write:pets')],
        consumes: ['application/x-www-form-urlencoded'],
        params: PetIdV2Params,
        body: PetFormBody,
        response: { 200: Type.Ref('Pet'), ...v2Problems(404, 409, 415) },
      },
    },
    async (request, reply) => {
      const id = petIdParam(request)
      if (request.validationError !== undefined) throw request.validationError
      const fields: PetFields = {}
      if (request.body.name !== undefined) fields.name = request.body.name
      if (request.body.status !== undefined) {
        fields.status = request.body.status
        fields.statusOmitted = false
      }
      const pet = await db
        .transaction()
        .execute((trx) => updatePet(trx, request.principal!.accountId, id, fields))
      reply.header('etag', etagFor(pet.version))
      return toPetV2(pet)
    },
  )

  app.delete(
    '/pet/:petId',
    {
      attachValidation: true,
      config: { scope: 'write:pets', apiKeyHeader: true },
      schema: {
        operationId: 'deletePet',
        summary: 'Deletes a pet',
        description: 'Takes an OAuth token or an API key in the `api_key` header, and `If-Match`.',
        tags,
        security: [API_KEY, OAUTH('write:pets')],
        params: PetIdV2Params,
        headers: Type.Object({
          api_key: Type.Optional(Type.String()),
          'if-match': Type.Optional(Type.String()),
        }),
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 412) },
      },
    },
    async (request): Promise<ApiResponse> => {
      const id = petIdParam(request)
      const ifMatch = parseIfMatch(request.headers['if-match'])
      const pet = await db
        .transaction()
        .execute((trx) => deletePet(trx, request.principal!.accountId, id, ifMatch))
      return { code: 200, type: 'unknown', message: String(pet.id) }
    },
  )

  app.post(
    '/pet/:petId/uploadImage',
    {
      attachValidation: true,
      config: { scope: 'write:pets' },
      schema: {
        operationId: 'uploadFile',
        summary: 'uploads an image',
        description: `Multipart field \`file\`: a JPEG, PNG, GIF or WebP image of at most ${UPLOAD_LIMIT_BYTES / 1024 / 1024} MiB. It is stored and its URL added to the pet's photoUrls.`,
        tags,
        security: [OAUTH('write:pets')],
        consumes: ['multipart/form-data'],
        params: PetIdV2Params,
        body: UploadImageBody,
        response: { 200: Type.Ref('ApiResponse'), ...v2Problems(404, 413, 415, 422) },
      },
    },
    async (request): Promise<ApiResponse> => {
      const id = petIdParam(request)
      const accountId = request.principal!.accountId
      if (!request.isMultipart()) {
        throw new ApiError(
          'unsupported_media_type',
          'Send the image as multipart/form-data in the field `file`.',
        )
      }
      // 404, 422 (no room for another photo) or 413 (quota used up) before reading a large body.
      await assertCanUpload(db, accountId, id, config.imageQuotaBytes)
      let file: { data: Buffer; filename: string } | undefined
      let metadata: string | undefined
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || file !== undefined) {
            part.file.resume()
            continue
          }
          file = { data: await (part as MultipartFile).toBuffer(), filename: part.filename }
        } else if (part.fieldname === 'additionalMetadata') metadata = String(part.value)
      }
      if (file === undefined) {
        throw new ApiError('parameter_missing', 'Missing required multipart field `file`.', { param: 'file' })
      }
      const image = { accountId, petId: id, ...file, publicUrl: options.publicUrl }
      const { url, bytes } = await db
        .transaction()
        .execute((trx) => addPetImage(trx, { ...image, quotaBytes: config.imageQuotaBytes }))
      return {
        code: 200,
        type: 'unknown',
        message: `additionalMetadata: ${metadata ?? ''}\nFile uploaded to ${url}, ${bytes} bytes`,
      }
    },
  )

  app.get(
    '/images/:name',
    {
      config: { public: true },
      schema: {
        operationId: 'getPetImage',
        summary: 'An uploaded pet image',
        description:
          'Public: image names are unguessable, like the photo URLs that carry them. 404 once the image is deleted (its URL dropped from the pet, or the pet deleted).',
        tags,
        security: [],
        params: Type.Object({
          name: Type.String({ pattern: IMAGE_NAME_PATTERN }),
        }),
        response: { 200: { type: 'string', format: 'binary' }, ...v2Problems(404) },
      },
    },
    async (request, reply) => {
      const image = await readImage(db, request.params.name)
      return reply
        .type(image.contentType)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(image.data)
    },
  )

  app.get(
    '/store/inventory',
    {
      config: { scope: 'read:pets', apiKeyHeader: true },
      schema: {
        operationId: 'getInventory',
        summary: 'Returns pet inventories by status',
        description:
          'A map of status to the number of your pets in it. Takes an API key in `api_key`, or an OAuth token.',
        tags: storeTags,
        security: [API_KEY, OAUTH('read:pets')],
        response: { 200: InventorySchema, ...v2Problems() },
      },
    },
    async (request) => {
      const counts = await countPetsByStatus(db, request.principal!.accountId)
      return Object.fromEntries(PET_STATUSES.map((s) => [s, counts[s] ?? 0]))
    },
  )
}

export { FIND_LIMIT as V2_FIND_LIMIT }
