import { Type } from '@sinclair/typebox'
import { PET_STATUSES } from '../../pets/pet-status.ts'
import { LIMITS, Nullable, StringEnum, Text } from '../../schemas/common.ts'
import { ListOf, ListQuery } from '../../schemas/list.ts'

/** Schemas of the v1 pet API: validation, serialisation, OpenAPI and handler types at once. */

export const PetStatusSchema = StringEnum(PET_STATUSES, {
  description: 'available⇄pending, available→sold, pending→sold; sold is final.',
})

const OwnerId = Type.String({
  maxLength: 64,
  description: 'Id of a user of your account (usr_…); empty to clear.',
})
const OptionalText = (description: string) => Type.String({ maxLength: LIMITS.shortText, description })

export const CategorySchema = Type.Object(
  {
    id: Type.Optional(Type.Integer({ minimum: 0 })),
    name: Type.Optional(Type.String({ maxLength: LIMITS.shortText })),
  },
  { additionalProperties: false },
)
export const TagSchema = CategorySchema

export const PetV1Schema = Type.Object(
  {
    id: Type.Integer({ description: 'Assigned by the service; positive and increasing.', examples: [1] }),
    object: Type.Literal('pet'),
    name: Type.String({ examples: ['Rex'] }),
    owner_id: Nullable(Type.String()),
    species: Nullable(Type.String({ examples: ['dog'] })),
    breed: Nullable(Type.String()),
    status: PetStatusSchema,
    photo_urls: Type.Array(Type.String()),
    category: Nullable(CategorySchema),
    tags: Type.Array(TagSchema),
    version: Type.Integer({ description: 'Increases on every change; the ETag.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A pet, v1 representation.' },
)

export const CreatePetBody = Type.Object(
  {
    name: Text('The name of the pet (required, 1–200 characters).'),
    owner_id: Type.Optional(Nullable(OwnerId)),
    species: Type.Optional(Nullable(OptionalText('The species, e.g. dog.'))),
    breed: Type.Optional(Nullable(OptionalText('The breed.'))),
    status: Type.Optional(PetStatusSchema),
  },
  { additionalProperties: false },
)

export const UpdatePetBody = Type.Object(
  {
    name: Type.Optional(Text('New name.')),
    owner_id: Type.Optional(Nullable(OwnerId)),
    species: Type.Optional(Nullable(OptionalText('New species; empty or null clears it.'))),
    breed: Type.Optional(Nullable(OptionalText('New breed; empty or null clears it.'))),
    status: Type.Optional(PetStatusSchema),
  },
  { additionalProperties: false },
)

export const PetIdParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The pet id.' }),
})

const Cursor = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description })

export const ListPetsQuery = ListQuery(
  {
    starting_after: Cursor('Id of the last pet of the previous page: the next (older) page.'),
    ending_before: Cursor('Id of the first pet of the current page: the previous (newer) page.'),
  },
  {
    status: Type.Optional(PetStatusSchema),
    species: Type.Optional(Type.String({ maxLength: LIMITS.shortText })),
    owner_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
)

/** The answer of a delete. */
export const DeletedPetSchema = Type.Object({
  id: Type.Integer(),
  object: Type.Literal('pet'),
  deleted: Type.Literal(true),
})

export const PetListSchema = ListOf(PetV1Schema)
