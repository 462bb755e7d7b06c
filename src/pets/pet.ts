import type { PetStatus } from './pet-status.ts'

export interface Category {
  id?: number
  name?: string
}

export interface Tag {
  id?: number
  name?: string
}

/** A pet as the domain knows it, whichever API version wrote it. */
export interface Pet {
  id: number
  accountId: string
  name: string
  ownerId: string | null
  species: string | null
  breed: string | null
  status: PetStatus
  photoUrls: string[]
  /** null: never set (v2 leaves the field out). */
  category: Category | null
  /** null: never set (v2 leaves the field out; v1 shows []). */
  tags: Tag[] | null
  /** True when the last v2 write left `status` out: v2 reads omit it (v1 still shows it). */
  statusOmitted: boolean
  version: number
  createdAt: string
  updatedAt: string
}

/** The fields a write may set; every one optional, `name` required on create. */
export interface PetFields {
  name?: string
  ownerId?: string | null
  species?: string | null
  breed?: string | null
  status?: PetStatus
  photoUrls?: string[]
  category?: Category | null
  tags?: Tag[] | null
  statusOmitted?: boolean
}
