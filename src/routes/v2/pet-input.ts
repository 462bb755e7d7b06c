import type { Category, PetFields, Tag } from '../../pets/pet.ts'
import type { PetStatus } from '../../pets/pet-status.ts'

/** The body of POST and PUT /v2/pet as validated (PetV2Body): null anywhere means absent. */
export interface PetInput {
  id?: number | null
  category?: IdNameInput | null
  name: string
  photoUrls: string[]
  tags?: IdNameInput[] | null
  status?: PetStatus | null
  ownerId?: string | null
  species?: string | null
  breed?: string | null
}

interface IdNameInput {
  id?: number | null
  name?: string | null
}

/** A category or tag as stored: its null members left out, so it reads back without them. */
function idName(value: IdNameInput): Category & Tag {
  const out: Category & Tag = {}
  if (value.id != null) out.id = value.id
  if (value.name != null) out.name = value.name
  return out
}

/** The Petstore fields replace what is stored (absent: cleared); ownerId, species, breed change only when sent. */
export function fieldsFromV2(body: PetInput): PetFields & { name: string } {
  const fields: PetFields & { name: string } = {
    name: body.name,
    photoUrls: body.photoUrls,
    category: body.category == null ? null : idName(body.category),
    tags: body.tags == null ? null : body.tags.map(idName),
    statusOmitted: body.status == null,
  }
  if (body.status != null) fields.status = body.status
  if (body.ownerId !== undefined) fields.ownerId = body.ownerId === '' ? null : body.ownerId
  if (body.species !== undefined) fields.species = body.species === '' ? null : body.species
  if (body.breed !== undefined) fields.breed = body.breed === '' ? null : body.breed
  return fields
}
