import type { ReservedId } from '../db/account-ids.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import type { EventToRecord } from '../events/events-service.ts'
import type { AtomicCreate, KeyToClaim } from '../idempotency/idempotency.ts'
import { fieldChanges } from '../lib/field-diff.ts'
import type { IfMatch } from '../lib/optimistic.ts'
import { writeAtCurrentVersion } from '../lib/optimistic.ts'
import { nowIso } from '../lib/time.ts'
import type { Pet, PetFields } from './pet.ts'
import { imageNamesIn } from './pet-images.ts'
import { assertTransition } from './pet-status.ts'
import { toPetV1 } from './pet-views.ts'
import {
  type NewPet,
  writeNewPet,
  writeNewPetClaimingKey,
  writePetDeletion,
  writePetUpdate,
} from './pet-writes.ts'
import { countPetsOfOwner, findPet, listPets as listPetPage, type PetListQuery } from './pets-repository.ts'

/**
 * The pet domain shared by v1 and v2: each rule once (the owner is a user of the account, the
 * default status, the status transitions, the version a write is made at, an uploaded image
 * lives as long as a photo URL names it, the event of every change). How a change and its side
 * effects reach each database is src/pets/pet-writes.ts's. Every function takes the transaction
 * its caller (the route) opened; on PostgreSQL, createPet, updatePet and deletePet are atomic
 * without one (each is one statement, see src/db/atomic-write.ts).
 */

export function petNotFound(id: number | string): ApiError {
  return new ApiError('pet_not_found', `No pet with id ${id} exists in your account.`, { param: 'id' })
}

/** The rule of every write that names an owner: the owner is a user of the pet's account. */
function ownerNotFound(ownerId: string | null | undefined): ApiError {
  return new ApiError(
    'owner_not_found',
    `owner_id ${JSON.stringify(ownerId)} is not a user of your account; create the user first.`,
    { param: 'owner_id' },
  )
}

/**
 * Creates a pet with an assigned id: `id` was reserved (database.ids.reserve) before the
 * transaction `db` began. On PostgreSQL this is atomic without a transaction (routes call it
 * through createOnceAtomic): the write is one statement (src/pets/pet-writes.ts). Only when the
 * id was taken does it send more: the id's reservation past the collision, committed on its own
 * as every reservation is, and the insert again.
 */
export async function createPet(
  db: Db,
  accountId: string,
  fields: PetFields & { name: string },
  id: ReservedId,
): Promise<Pet> {
  const newPetWithId = newPet(accountId, fields, nowIso())
  return id.insert(db, async (n) => {
    const { pet, ownerFound } = await writeNewPet(db, newPetWithId(n))
    if (!ownerFound) throw ownerNotFound(fields.ownerId)
    return pet
  })
}

/** A new pet with the id tried: the default status, and its `pet.created` event. */
function newPet(accountId: string, fields: PetFields & { name: string }, at: string): (id: number) => NewPet {
  const values = { ...fields, status: fields.status ?? 'available' }
  return (id) => ({
    accountId,
    id,
    fields: values,
    at,
    eventOf: (created) => petCreated(accountId, created, at),
  })
}

/** What writeNewPetClaimingKey's caller makes of an answer that claimed nothing. */
const NOT_CLAIMED = Symbol('not claimed')

/**
 * PostgreSQL only: createPet with an Idempotency-Key claimed, and its response stored, in the
 * create's one statement (writeNewPetClaimingKey). Undefined when the key was not claimed, or the
 * owner is not the account's: nothing was written, and the caller's transactional claim tells
 * a replay from a refusal.
 */
export async function createPetClaimingKey(
  db: Db,
  accountId: string,
  fields: PetFields & { name: string },
  id: ReservedId,
  key: KeyToClaim<Pet>,
): Promise<Pet | undefined> {
  const newPetWithId = newPet(accountId, fields, nowIso())
  const outcome = await id.insert(db, async (n) => {
    const inserted = await writeNewPetClaimingKey(db, newPetWithId(n), (created) => key.argsFor(created))
    // id.insert tries the next id on undefined: only for a taken id.
    return inserted === 'id taken' ? undefined : (inserted ?? NOT_CLAIMED)
  })
  return outcome === NOT_CLAIMED ? undefined : outcome
}

/**
 * createPet and createPetClaimingKey for one new pet, as createOnceAtomic
 * (src/routes/idempotent-create.ts) runs them; the route adds its response.
 */
export function petCreation(
  accountId: string,
  fields: PetFields & { name: string },
  id: ReservedId,
): Omit<AtomicCreate<Pet>, 'respond'> {
  return {
    create: (db) => createPet(db, accountId, fields, id),
    createClaiming: (db, key) => createPetClaimingKey(db, accountId, fields, id, key),
  }
}

/**
 * The Petstore's `POST /pet` with an `id` the client chose: creates the account's pet `id`, or,
 * when the account has one, replaces it exactly as an update does (its version moves on, the
 * status rules hold, `pet.updated` is recorded). `created` says which.
 */
export async function savePetWithId(
  db: Db,
  accountId: string,
  id: number,
  fields: PetFields & { name: string },
): Promise<{ pet: Pet; created: boolean }> {
  for (;;) {
    if ((await findPet(db, accountId, id)) !== undefined) {
      return { pet: await updatePet(db, accountId, id, fields), created: false }
    }
    const { pet, ownerFound } = await writeNewPet(db, newPet(accountId, fields, nowIso())(id))
    if (!ownerFound) throw ownerNotFound(fields.ownerId)
    if (pet !== undefined) return { pet, created: true }
    // A concurrent request created this very pet between the read and the insert: replace it.
  }
}

/** The `pet.created` event of a new pet: the pet as v1 shows it. */
function petCreated(accountId: string, pet: Pet, at: string): EventToRecord {
  return { accountId, type: 'pet.created', objectId: String(pet.id), object: toPetV1(pet), at }
}

export async function getPet(db: Db, accountId: string, id: number): Promise<Pet> {
  const pet = await findPet(db, accountId, id)
  if (pet === undefined) throw petNotFound(id)
  return pet
}

const COMPARED: (keyof PetFields)[] = [
  'name',
  'ownerId',
  'species',
  'breed',
  'status',
  'photoUrls',
  'category',
  'tags',
  'statusOmitted',
]

/**
 * Changes a pet at its current version. `change` is the fields, or a function of the pet as it is
 * when written (retried with the newer pet when another writer got there first), for a change
 * that builds on what is stored, such as adding a photo URL to the list. On PostgreSQL the write
 * is one statement after the read (src/pets/pet-writes.ts).
 */
export async function updatePet(
  db: Db,
  accountId: string,
  id: number,
  change: PetFields | ((current: Pet) => PetFields),
  ifMatch?: IfMatch,
): Promise<Pet> {
  return writeAtCurrentVersion({
    load: () => findPet(db, accountId, id),
    missing: () => petNotFound(id),
    ifMatch,
    write: async (current) => {
      const fields = typeof change === 'function' ? change(current) : change
      // Any write that names a status makes it part of the v2 view again (see Pet.statusOmitted).
      const named = fields.status !== undefined && fields.statusOmitted === undefined
      const { changes, previous } = fieldChanges<PetFields>(
        current,
        named ? { ...fields, statusOmitted: false } : fields,
        COMPARED,
      )
      if (changes.status !== undefined) assertTransition(current.status, changes.status)
      if (Object.keys(changes).length === 0) return current
      const at = nowIso()
      const previousV1 = Object.fromEntries(
        Object.entries(previous)
          .filter(([key]) => V1_NAMES[key] !== undefined)
          .map(([key, value]) => [V1_NAMES[key], value]),
      )
      const eventOf = (updated: Pet): EventToRecord => ({
        accountId,
        type: 'pet.updated',
        objectId: String(id),
        object: toPetV1(updated),
        previousAttributes: previousV1,
        at,
      })
      // An uploaded image lives only as long as a photo URL of its pet names it.
      const keepImages = changes.photoUrls === undefined ? undefined : imageNamesIn(changes.photoUrls)
      const written = await writePetUpdate(db, { current, changes, at, eventOf, keepImages })
      if (!written.ownerFound) throw ownerNotFound(changes.ownerId)
      return written.pet
    },
  })
}

const V1_NAMES: Record<string, string> = {
  name: 'name',
  ownerId: 'owner_id',
  species: 'species',
  breed: 'breed',
  status: 'status',
  photoUrls: 'photo_urls',
  category: 'category',
  tags: 'tags',
}

export async function deletePet(db: Db, accountId: string, id: number, ifMatch?: IfMatch): Promise<Pet> {
  return writeAtCurrentVersion({
    load: () => findPet(db, accountId, id),
    missing: () => petNotFound(id),
    ifMatch,
    write: async (current) => {
      const event: EventToRecord = {
        accountId,
        type: 'pet.deleted',
        objectId: String(id),
        object: toPetV1(current),
        at: nowIso(),
      }
      return (await writePetDeletion(db, current, event)) ? current : undefined
    },
  })
}

// Reads for the dashboard's pages (src/dashboard/routes/data-routes.ts, orders-routes.ts).
export {
  countPetsByOwners,
  countPetsByStatus,
  findPet,
  findPetsByStatus,
  findPetsByTags,
  listSpecies,
  petNamesByIds,
} from './pets-repository.ts'
export type { PetListQuery }

/** A page of the account's pets, newest first; 400 invalid_cursor when a cursor names no pet of it. */
export async function listPets(
  db: Db,
  accountId: string,
  query: PetListQuery,
): Promise<{ pets: Pet[]; hasMore: boolean }> {
  const page = await listPetPage(db, accountId, query)
  if (page !== undefined) return { pets: page.rows, hasMore: page.hasMore }
  throw new ApiError(
    'invalid_cursor',
    `The cursor ${query.startingAfter ?? query.endingBefore} is not a pet of your account.`,
    { param: query.startingAfter !== undefined ? 'starting_after' : 'ending_before' },
  )
}

/**
 * The rule that a user who owns pets is not deleted: passed to the users service's deleteUser
 * (users know nothing of pets; pets depend on users, never the reverse). Runs in the delete's
 * transaction, so a pet given to the user meanwhile is seen.
 */
export async function assertOwnsNoPets(db: Db, accountId: string, userId: string): Promise<void> {
  const pets = await countPetsOfOwner(db, accountId, userId)
  if (pets === 0) return
  throw new ApiError(
    'user_has_pets',
    `User ${userId} still owns ${pets} pet${pets === 1 ? '' : 's'}; give them another owner (or none), or delete them first.`,
    { extensions: { pet_count: pets } },
  )
}

/** For a sandbox's reset: every pet of the account and its images. */
export { deleteAllPetsOfAccount } from './pets-repository.ts'
