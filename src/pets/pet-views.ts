import type { Category, Pet, Tag } from './pet.ts'
import type { PetStatus } from './pet-status.ts'

/** The v1 (snake_case, Stripe-style) representation of a pet. */
export interface PetV1 {
  id: number
  object: 'pet'
  name: string
  owner_id: string | null
  species: string | null
  breed: string | null
  status: PetStatus
  photo_urls: string[]
  category: Category | null
  tags: Tag[]
  version: number
  created_at: string
  updated_at: string
}

export function toPetV1(pet: Pet): PetV1 {
  return {
    id: pet.id,
    object: 'pet',
    name: pet.name,
    owner_id: pet.ownerId,
    species: pet.species,
    breed: pet.breed,
    status: pet.status,
    photo_urls: pet.photoUrls,
    category: pet.category,
    tags: pet.tags ?? [],
    version: pet.version,
    created_at: pet.createdAt,
    updated_at: pet.updatedAt,
  }
}
