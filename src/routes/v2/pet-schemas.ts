import { Type } from '@sinclair/typebox'
import { PET_STATUSES } from '../../pets/pet-status.ts'
import { LIMITS, Nullable, StringEnum } from '../../schemas/common.ts'

/**
 * Schemas of the Petstore-compatible v2 API (camelCase, the Swagger Petstore v2 `Pet`). Optional
 * fields are absent, never null, in answers; in requests, null is taken as absent (members of a
 * category or tag included).
 */

const Int64 = (description: string) => Type.Integer({ format: 'int64', description })

/** {id?, name?}: the shape of a category and of a tag as answered (members absent, never null). */
const IdName = (options: { $id?: string; description: string }) =>
  Type.Object(
    {
      id: Type.Optional(Int64(`${options.description} id.`)),
      name: Type.Optional(Type.String({ maxLength: LIMITS.shortText })),
    },
    { additionalProperties: false, ...options },
  )
const CategoryV2 = IdName({ $id: 'Category', description: 'Category' })
const TagV2 = IdName({ $id: 'Tag', description: 'Tag' })

/** A category or tag as sent: a null member is taken as absent. */
const IdNameInput = (description: string) =>
  Type.Object(
    {
      id: Type.Optional(Nullable(Int64(`${description} id.`))),
      name: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.shortText }))),
    },
    { additionalProperties: false, description },
  )

export const PetStatusV2 = StringEnum(PET_STATUSES, { description: 'pet status in the store' })

const PhotoUrls = Type.Array(Type.String({ maxLength: LIMITS.url }), { maxItems: LIMITS.photoUrls })

export const PetV2Schema = Type.Object(
  {
    id: Int64('Unique within your account: chosen by the client (POST with an `id`) or assigned from 1 up.'),
    category: Type.Optional(Type.Ref('Category')),
    name: Type.String({ examples: ['doggie'] }),
    photoUrls: Type.Array(Type.String()),
    tags: Type.Optional(Type.Array(Type.Ref('Tag'))),
    status: Type.Optional(PetStatusV2),
    ownerId: Type.Optional(Type.String({ description: 'Id of a user of your account (usr_…).' })),
    species: Type.Optional(Type.String()),
    breed: Type.Optional(Type.String()),
  },
  { $id: 'Pet', description: 'A pet, Petstore v2 representation: read back exactly as it was sent.' },
)

/**
 * The body of POST and PUT /v2/pet; null is taken as absent wherever a field is optional. `id` is
 * required by PUT (checked by the route: 400).
 */
export const PetV2Body = Type.Object(
  {
    id: Type.Optional(
      Nullable(
        Int64(
          'The pet to update (PUT). POST: the id to create the pet with (or of your pet to replace), 1 to 2^53 − 1; absent or null, one is assigned.',
        ),
      ),
    ),
    category: Type.Optional(Nullable(IdNameInput('Category'))),
    name: Type.String({ minLength: 1, maxLength: LIMITS.shortText, pattern: '\\S', examples: ['doggie'] }),
    photoUrls: PhotoUrls,
    tags: Type.Optional(Nullable(Type.Array(IdNameInput('Tag'), { maxItems: LIMITS.tags }))),
    status: Type.Optional(Nullable(PetStatusV2)),
    ownerId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    species: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.shortText }))),
    breed: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.shortText }))),
  },
  { additionalProperties: false },
)

export const PetIdV2Params = Type.Object({ petId: Int64('ID of the pet') })

export const PetFormBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.shortText,
        pattern: '\\S',
        description: 'Updated name of the pet',
      }),
    ),
    status: Type.Optional(PetStatusV2),
  },
  { additionalProperties: false },
)

/** At most this many values in one findByStatus / findByTags query (one SQL condition each). */
export const FIND_VALUES_LIMIT = 100

export const FindByStatusQuery = Type.Object({
  status: Type.Array(Type.String({ maxLength: LIMITS.shortText }), {
    minItems: 1,
    maxItems: FIND_VALUES_LIMIT,
    description: `Status values to consider: repeat the parameter or send a comma-separated list (at most ${FIND_VALUES_LIMIT} values).`,
  }),
})

export const FindByTagsQuery = Type.Object({
  tags: Type.Array(Type.String({ maxLength: LIMITS.shortText }), {
    minItems: 1,
    maxItems: FIND_VALUES_LIMIT,
    description: `Tags to filter by: repeat the parameter or send a comma-separated list (at most ${FIND_VALUES_LIMIT} names).`,
  }),
})

export const ApiResponseSchema = Type.Object(
  {
    code: Type.Integer({ format: 'int32' }),
    type: Type.String(),
    message: Type.String(),
  },
  { $id: 'ApiResponse' },
)

export const UploadImageBody = Type.Object({
  additionalMetadata: Type.Optional(Type.String({ description: 'Additional data to pass to server' })),
  file: Type.Optional(Type.String({ format: 'binary', description: 'file to upload' })),
})

export const InventorySchema = Type.Record(Type.String(), Type.Integer({ format: 'int32' }), {
  description: 'Number of pets in each status.',
})

export const PET_V2_SCHEMAS = [CategoryV2, TagV2, PetV2Schema, ApiResponseSchema]
