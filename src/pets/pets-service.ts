import type { ReservedId } from '../db/account-ids.ts'
import { isPostgres } from '../db/dialect.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { type EventToRecord, newEventRow, recordEvent } from '../events/events-service.ts'
import type { AtomicCreate, KeyToClaim } from '../idempotency/idempotency.ts'
import { fieldChanges } from '../lib/field-diff.ts'
import type { IfMatch } from '../lib/optimistic.ts'
import { writeAtCurrentVersion } from '../lib/optimistic.ts'
import { nowIso } from '../lib/time.ts'
import { findUser } from '../users/users-service.ts'
import { deleteImagesOfPetExcept } from './images-repository.ts'
import type { Pet, PetFields } from './pet.ts'
import { imageNamesIn } from './pet-images.ts'
import { assertTransition } from './pet-status.ts'
import { toPetV1 } from './pet-views.ts'
import {
  countPetsOfOwner,
  deletePetAtVersion,
  deletePetWithEvent,
  findPet,
  insertPet,
  insertPetClaimingKey,
  insertPetWithEvent,
  listPets as listPetPage,
  type NewPetInsert,
  type PetListQuery,
  updatePetAtVersion,
  updatePetWithEvent,
} from './pets-repository.ts'

/**
 * The pet domain shared by v1 and v2: ownership checks, status rules and the event written with
 * every change. Every function takes the transaction its caller (the route) opened; on
 * PostgreSQL, createPet, updatePet and deletePet are atomic without one (each change and its
 * event are one statement, see src/db/atomic-write.ts).
 */

export function petNotFound(id: number | string): ApiError {
  return new ApiError('pet_not_found', `No pet with id ${id} exists in your account.`, { param: 'id' })
}

function ownerNotFound(ownerId: string): ApiError {
  return new ApiError(
    'owner_not_found',
    `owner_id ${JSON.stringify(ownerId)} is not a user of your account; create the user first.`,
    { param: 'owner_id' },
  )
}

async function assertOwner(db: Db, accountId: string, ownerId: string): Promise<void> {
  if ((await findUser(db, accountId, ownerId)) === undefined) throw ownerNotFound(ownerId)
}

/**
 * Creates a pet with an assigned id: `id` was reserved (database.ids.reserve) before the
 * transaction `db` began.
 *
 * On PostgreSQL this is atomic without a transaction (routes call it through createOnceAtomic):
 * one statement checks the owner, inserts the pet and its `pet.created` event. Only when the id
 * was taken does it send more: the id's reservation past the collision, committed on its own
 * as every reservation is, and the insert again. On SQLite, which has no data-modifying WITH,
 * it takes a transaction as every write does.
 */
export async function createPet(
  db: Db,
  accountId: string,
  fields: PetFields & { name: string },
  id: ReservedId,
): Promise<Pet> {
  if (isPostgres(db)) {
    const insertWithId = newPetInsert(accountId, fields, nowIso())
    return id.insert(db, async (n) => {
      const { pet, ownerFound } = await insertPetWithEvent(db, insertWithId(n))
      if (!ownerFound && fields.ownerId != null) throw ownerNotFound(fields.ownerId)
      return pet
    })
  }
  const values = { ...fields, status: fields.status ?? 'available' }
  if (fields.ownerId != null) await assertOwner(db, accountId, fields.ownerId)
  const at = nowIso()
  const pet = await id.insert(db, (n) => insertPet(db, accountId, n, values, at))
  await recordEvent(db, petCreated(accountId, pet, at))
  return pet
}

/** PostgreSQL's one-statement insert of a new pet and its `pet.created` event, for the id tried. */
function newPetInsert(
  accountId: string,
  fields: PetFields & { name: string },
  at: string,
): (id: number) => NewPetInsert {
  const values = { ...fields, status: fields.status ?? 'available' }
  const eventOf = (created: Pet) => newEventRow(petCreated(accountId, created, at))
  return (id) => ({ accountId, id, fields: values, at, eventOf })
}

/** What insertPetClaimingKey's caller makes of an answer that claimed nothing. */
const NOT_CLAIMED = Symbol('not claimed')

/**
 * PostgreSQL only: createPet with an Idempotency-Key claimed, and its response stored, in the
 * create's one statement (insertPetClaimingKey). Undefined when the key was not claimed, or the
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
  const insertWithId = newPetInsert(accountId, fields, nowIso())
  const outcome = await id.insert(db, async (n) => {
    const inserted = await insertPetClaimingKey(db, insertWithId(n), (created) => key.argsFor(created))
    // id.insert tries the next id on undefined: only for a taken id.
    return inserted === 'id taken' ? undefined : (inserted ?? NOT_CLAIMED)
  })
  return outcome === NOT_CLAIMED ? undefined : outcome
}

/**
 * createPet and createPetClaimingKey for one new pet, as createOnceAtomic
 * (src/idempotency/idempotent-create.ts) runs them; the route adds its response.
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
    if (fields.ownerId != null) await assertOwner(db, accountId, fields.ownerId)
    const at = nowIso()
    const pet = await insertPet(db, accountId, id, { ...fields, status: fields.status ?? 'available' }, at)
    if (pet !== undefined) {
      await recordEvent(db, petCreated(accountId, pet, at))
      return { pet, created: true }
    }
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
 * that builds on what is stored, such as adding a photo URL to the list.
 *
 * On PostgreSQL the write is one statement after the read: the update at the version read, the
 * new owner's check, the pruning of images no photo URL names any more and the `pet.updated`
 * event (src/pets/pets-repository.ts, updatePetWithEvent). SQLite runs them one by one in the
 * caller's transaction.
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
      if (isPostgres(db)) {
        const written = await updatePetWithEvent(
          db,
          current,
          changes,
          at,
          (updated) => newEventRow(eventOf(updated)),
          keepImages,
        )
        if (!written.ownerFound && changes.ownerId != null) throw ownerNotFound(changes.ownerId)
        return written.pet
      }
      if (changes.ownerId != null) await assertOwner(db, accountId, changes.ownerId)
      const updated = await updatePetAtVersion(db, accountId, id, current.version, changes, at)
      if (updated === undefined) return undefined
      if (keepImages !== undefined) await deleteImagesOfPetExcept(db, accountId, id, keepImages)
      await recordEvent(db, eventOf(updated))
      return updated
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
      // Its uploaded images go with it (pet_images.pet_id cascades, migration 2026-11-23T03-images).
      // On PostgreSQL the delete and its event are one statement.
      if (isPostgres(db)) {
        return (await deletePetWithEvent(db, accountId, id, current.version, newEventRow(event)))
          ? current
          : undefined
      }
      if (!(await deletePetAtVersion(db, accountId, id, current.version))) return undefined
      await recordEvent(db, event)
      return current
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
  if (page !== undefined) return page
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
