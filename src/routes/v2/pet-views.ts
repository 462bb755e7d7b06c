import type { Category, Pet, Tag } from '../../pets/pet.ts'
import type { PetStatus } from '../../pets/pet-status.ts'

/** The Petstore v2 representation: absent fields are left out, never null. */
export interface PetV2 {
  id: number
  category?: Category
  name: string
  photoUrls: string[]
  tags?: Tag[]
  status?: PetStatus
  ownerId?: string
  species?: string
  breed?: string
}

export function toPetV2(pet: Pet): PetV2 {
  const out: PetV2 = { id: pet.id, name: pet.name, photoUrls: pet.photoUrls }
  if (pet.category !== null) out.category = pet.category
  if (pet.tags !== null) out.tags = pet.tags
  if (!pet.statusOmitted) out.status = pet.status
  if (pet.ownerId !== null) out.ownerId = pet.ownerId
  if (pet.species !== null) out.species = pet.species
  if (pet.breed !== null) out.breed = pet.breed
  return out
}

/** Petstore's `ApiResponse`. */
export interface ApiResponse {
  code: number
  type: string
  message: string
}
