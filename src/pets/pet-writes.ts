import { isPostgres } from '../db/dialect.ts'
import type { Db } from '../db/schema.ts'
import { type EventToRecord, newEventRow, recordEvent } from '../events/events-service.ts'
import type { KeyClaimArgs } from '../idempotency/key-claim-statement.ts'
import { findUser } from '../users/users-service.ts'
import { deleteImagesOfPetExcept } from './images-repository.ts'
import type { Pet, PetFields } from './pet.ts'
import type { PetStatus } from './pet-status.ts'
import {
  deletePetAtVersion,
  deletePetWithEvent,
  insertPet,
  insertPetClaimingKey,
  insertPetWithEvent,
  type NewPetInsert,
  updatePetAtVersion,
  updatePetWithEvent,
} from './pets-repository.ts'

/**
 * How a pet's change and what goes with it reach each database; the rules are the pets
 * service's. Each write carries its side effects: the owner check (the owner must be a user of
 * the account), the change's event, and on an update the pruning of uploaded images no photo URL
 * names any more. On PostgreSQL a write is one statement, atomic on its own (no transaction, one
 * round trip), built from fragments the owning features provide (src/events/event-statements.ts,
 * src/users/user-statements.ts, src/idempotency/key-claim-statement.ts). On SQLite, which has no
 * data-modifying WITH, the same steps run one by one in the caller's transaction, through the
 * owning features' services. test/pets/pet-writes-agreement.postgres.test.ts runs the same
 * changes through both and compares the rows they leave.
 */

/** What a write did: `pet` is undefined when nothing was written; then `ownerFound` says why. */
export interface PetWritten {
  pet: Pet | undefined
  /** False when the change names an owner that is not a user of the account (nothing written). */
  ownerFound: boolean
}

/** A new pet: its id (reserved, or the client's), its fields and the event built from it. */
export interface NewPet {
  accountId: string
  id: number
  fields: PetFields & { name: string; status: PetStatus }
  at: string
  eventOf: (pet: Pet) => EventToRecord
}

function statementOf(pet: NewPet): NewPetInsert {
  return { ...pet, eventOf: (created) => newEventRow(pet.eventOf(created)) }
}

/** Inserts the pet and its event; `pet` undefined and `ownerFound` true: the id was taken. */
export async function writeNewPet(db: Db, pet: NewPet): Promise<PetWritten> {
  if (isPostgres(db)) return insertPetWithEvent(db, statementOf(pet))
  const { accountId, id, fields, at } = pet
  if (!(await ownerFound(db, accountId, fields.ownerId))) return { pet: undefined, ownerFound: false }
  const inserted = await insertPet(db, accountId, id, fields, at)
  if (inserted !== undefined) await recordEvent(db, pet.eventOf(inserted))
  return { pet: inserted, ownerFound: true }
}

/**
 * PostgreSQL only: writeNewPet that also claims an Idempotency-Key and stores the response
 * `claimOf` builds from the pet, in the same statement. `'id taken'` when the account has pet
 * `id` already; undefined when the key was not claimed or the owner is not the account's
 * (nothing written either way).
 */
export async function writeNewPetClaimingKey(
  db: Db,
  pet: NewPet,
  claimOf: (pet: Pet) => KeyClaimArgs,
): Promise<Pet | 'id taken' | undefined> {
  if (!isPostgres(db)) throw new Error('writeNewPetClaimingKey is PostgreSQL only.')
  return insertPetClaimingKey(db, statementOf(pet), claimOf)
}

/** A change to a pet as read (`current`): the columns that change, and what goes with it. */
export interface PetChange {
  current: Pet
  changes: PetFields
  at: string
  eventOf: (updated: Pet) => EventToRecord
  /** When the photo URLs change: the uploaded images they still name; the pet's others go. */
  keepImages?: string[] | undefined
}

/** Writes the change if the pet is still at `current.version`; `pet` undefined when it is not. */
export async function writePetUpdate(db: Db, change: PetChange): Promise<PetWritten> {
  const { current, changes, at, keepImages } = change
  if (isPostgres(db)) {
    const eventOf = (updated: Pet) => newEventRow(change.eventOf(updated))
    return updatePetWithEvent(db, current, changes, at, eventOf, keepImages)
  }
  const { accountId, id } = current
  if (!(await ownerFound(db, accountId, changes.ownerId))) return { pet: undefined, ownerFound: false }
  const updated = await updatePetAtVersion(db, current, changes, at)
  if (updated === undefined) return { pet: undefined, ownerFound: true }
  if (keepImages !== undefined) await deleteImagesOfPetExcept(db, accountId, id, keepImages)
  await recordEvent(db, change.eventOf(updated))
  return { pet: updated, ownerFound: true }
}

/**
 * Deletes the pet if it is still at `current.version`, with its event; false when it is not.
 * Its uploaded images go with it (pet_images.pet_id cascades, migration 2026-11-23T03-images).
 */
export async function writePetDeletion(db: Db, current: Pet, event: EventToRecord): Promise<boolean> {
  const { accountId, id, version } = current
  if (isPostgres(db)) return deletePetWithEvent(db, accountId, id, version, newEventRow(event))
  if (!(await deletePetAtVersion(db, accountId, id, version))) return false
  await recordEvent(db, event)
  return true
}

/** SQLite's owner check: no owner named, or one that is a user of the account. */
async function ownerFound(db: Db, accountId: string, ownerId: string | null | undefined): Promise<boolean> {
  return ownerId == null || (await findUser(db, accountId, ownerId)) !== undefined
}
