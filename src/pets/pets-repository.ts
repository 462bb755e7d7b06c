import {
  type DeleteResult,
  type Insertable,
  type InsertResult,
  type QueryCreator,
  type Selectable,
  sql,
  type UpdateResult,
} from 'kysely'
import { keysetPage, type Page, seqWindow, type Walk } from '../db/keyset-page.ts'
import { type Placeholder, prepareQuery, variants } from '../db/prepared-query.ts'
import type { Database, Db, PetsTable } from '../db/schema.ts'
import type { NewEventRow } from '../events/event.ts'
import { type EventArgs, eventArgs, insertEventFor } from '../events/event-statements.ts'
import { type KeyClaimArgs, withKeyClaimed } from '../idempotency/key-claim-statement.ts'
import { userExists } from '../users/user-statements.ts'
import type { Pet, PetFields } from './pet.ts'
import type { PetStatus } from './pet-status.ts'

type PetRow = Selectable<PetsTable>

function toPet(row: Omit<PetRow, 'seq'>): Pet {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    ownerId: row.owner_id,
    species: row.species,
    breed: row.breed,
    status: row.status as PetStatus,
    photoUrls: JSON.parse(row.photo_urls) as string[],
    category: row.category === null ? null : (JSON.parse(row.category) as Pet['category']),
    tags: row.tags === null ? null : (JSON.parse(row.tags) as Pet['tags']),
    statusOmitted: row.status_omitted === 1,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

function toColumns(fields: PetFields): Partial<Insertable<PetsTable>> {
  const out: Partial<Insertable<PetsTable>> = {}
  if (fields.name !== undefined) out.name = fields.name
  if (fields.ownerId !== undefined) out.owner_id = fields.ownerId
  if (fields.species !== undefined) out.species = fields.species
  if (fields.breed !== undefined) out.breed = fields.breed
  if (fields.status !== undefined) out.status = fields.status
  if (fields.photoUrls !== undefined) out.photo_urls = JSON.stringify(fields.photoUrls)
  if (fields.category !== undefined)
    out.category = fields.category === null ? null : JSON.stringify(fields.category)
  if (fields.tags !== undefined) out.tags = fields.tags === null ? null : JSON.stringify(fields.tags)
  if (fields.statusOmitted !== undefined) out.status_omitted = fields.statusOmitted ? 1 : 0
  return out
}

type NewPetRow = Omit<Insertable<PetsTable>, 'seq'>

const insertPetQuery = prepareQuery<NewPetRow, InsertResult>((db, p) =>
  db
    .insertInto('pets')
    .values({
      id: p('id'),
      account_id: p('account_id'),
      name: p('name'),
      owner_id: p('owner_id'),
      species: p('species'),
      breed: p('breed'),
      status: p('status'),
      photo_urls: p('photo_urls'),
      category: p('category'),
      tags: p('tags'),
      status_omitted: p('status_omitted'),
      version: p('version'),
      created_at: p('created_at'),
      updated_at: p('updated_at'),
    })
    // Taken (a client chose the id, or a concurrent create did): nothing inserted, and on
    // PostgreSQL the transaction stays usable, unlike after a unique violation. No RETURNING:
    // the stored row is the one sent (seq aside, which a Pet does not carry), and on SQLite a
    // RETURNING clause goes through a temporary table, which cost about as much again as the
    // insert itself (bench/README.md, "The hot path's schema").
    .onConflict((oc) => oc.columns(['account_id', 'id']).doNothing()),
)

/** The row a new pet is stored as. */
function newPetRow(
  accountId: string,
  id: number,
  fields: PetFields & { name: string; status: PetStatus },
  at: string,
): Omit<PetRow, 'seq'> {
  return {
    id,
    account_id: accountId,
    name: fields.name,
    owner_id: fields.ownerId ?? null,
    species: fields.species ?? null,
    breed: fields.breed ?? null,
    status: fields.status,
    photo_urls: JSON.stringify(fields.photoUrls ?? []),
    category: fields.category == null ? null : JSON.stringify(fields.category),
    tags: fields.tags == null ? null : JSON.stringify(fields.tags),
    status_omitted: fields.statusOmitted ? 1 : 0,
    version: 1,
    created_at: at,
    updated_at: at,
  }
}

/** Inserts the pet with id `id`; undefined when the account already has a pet with that id. */
export async function insertPet(
  db: Db,
  accountId: string,
  id: number,
  fields: PetFields & { name: string; status: PetStatus },
  at: string,
): Promise<Pet | undefined> {
  const row = newPetRow(accountId, id, fields, at)
  return (await insertPetQuery.executeWrite(db, row)) === 1 ? toPet(row) : undefined
}

/** The row type of a WITH sub-statement written in raw SQL that nothing selects from. */
type CteRow = Record<string, unknown>

type PetWithEventArgs = NewPetRow &
  EventArgs & {
    /** The owner whose existence the insert requires (the `owner` variant only). */
    owner?: string
  }

/**
 * What a one-statement change answers: one row, whatever happened; `id` null when nothing was
 * written. The pet itself is known before the statement runs, so it does not come back.
 */
type PetWithEventRow = { id: number | null; owner_found: boolean }

/** The columns of a new pet, as the one-statement inserts list them. */
const NEW_PET_COLUMNS = [
  'id',
  'account_id',
  'name',
  'owner_id',
  'species',
  'breed',
  'status',
  'photo_urls',
  'category',
  'tags',
  'status_omitted',
  'version',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof NewPetRow)[]

/** The new pet's values as a select list (an INSERT … SELECT's source), in NEW_PET_COLUMNS order. */
function newPetValues(p: Placeholder<NewPetRow>) {
  return NEW_PET_COLUMNS.map((column) => sql.val(p(column)).as(column))
}

/**
 * PostgreSQL only (SQLite has no data-modifying WITH): the pet's insert and its event's in one
 * statement. The event is inserted from the pet insert's RETURNING rows, so an id already taken
 * (ON CONFLICT DO NOTHING) or a missing owner inserts neither, and one statement is atomic on its
 * own: no transaction is needed around it. All sub-statements see one snapshot, so the owner
 * check and the answer's `owner_found` agree. The outer select answers exactly one row (a left
 * join from a one-row table), so a caller can tell a missing owner from a taken id.
 * One variant requires the owner (`where exists`), the other has no owner to check.
 */
const insertPetWithEventQuery = variants<boolean, PetWithEventArgs, PetWithEventRow>(
  (checkOwner) => (checkOwner ? 'owner' : 'no-owner'),
  (checkOwner) => (db, p) =>
    db
      .with('inserted_pet', (qc) =>
        qc
          .insertInto('pets')
          .columns(NEW_PET_COLUMNS)
          .expression(qc.selectNoFrom(newPetValues(p)).$if(checkOwner, (q) => q.where(userExists(p))))
          // As insertPetQuery: a taken id inserts nothing (and then no event either).
          .onConflict((oc) => oc.columns(['account_id', 'id']).doNothing())
          .returning('id'),
      )
      .with('inserted_event', () => insertEventFor('inserted_pet', p))
      .selectFrom(sql<{ one: number }>`(select 1)`.as('one'))
      .leftJoin('inserted_pet', (join) => join.onTrue())
      .select('inserted_pet.id')
      .select((checkOwner ? userExists(p) : sql<boolean>`true`).as('owner_found')),
)

/** A new pet for a one-statement insert: the pet, and the event `eventOf` builds from it. */
export interface NewPetInsert {
  accountId: string
  id: number
  fields: PetFields & { name: string; status: PetStatus }
  at: string
  eventOf: (pet: Pet) => NewEventRow
}

/** A new pet as its one-statement insert takes it: the statement's parameters, its event's included. */
function newPetStatement({ accountId, id, fields, at, eventOf }: NewPetInsert) {
  const row = newPetRow(accountId, id, fields, at)
  // The pet as toPet will read it back: its event (and a stored response) are built from it.
  const pet = toPet(row)
  // Object.assign, not spreads: see prepareQuery (src/db/prepared-query.ts).
  const args: PetWithEventArgs = Object.assign(
    row,
    row.owner_id === null ? undefined : { owner: row.owner_id },
    eventArgs(eventOf(pet)),
  )
  return { pet, checkOwner: row.owner_id !== null, args }
}

/**
 * PostgreSQL only: inserts the pet with id `id` and, in the same statement, the event row
 * `eventOf` builds from the pet as it will be stored (every value of it is known before the
 * insert). `pet` is undefined when nothing was inserted: `ownerFound` false means the owner
 * (`fields.ownerId`) is not a user of the account, otherwise the id was taken.
 */
export async function insertPetWithEvent(
  db: Db,
  insert: NewPetInsert,
): Promise<{ pet: Pet | undefined; ownerFound: boolean }> {
  const { pet, checkOwner, args } = newPetStatement(insert)
  const [answer] = await insertPetWithEventQuery(checkOwner).execute(db, args)
  if (answer === undefined) throw new Error('insertPetWithEvent answered no row.')
  return { pet: answer.id === null ? undefined : pet, ownerFound: answer.owner_found }
}

const PETS_ID_TAKEN = 'pets_account_pet'

/** The pet's unique (account_id, id) refused the insert: PostgreSQL's unique_violation on it. */
function isPetIdTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown }
  return code === '23505' && constraint === PETS_ID_TAKEN
}

/**
 * insertPetWithEvent's statement that also claims an Idempotency-Key, storing the response
 * (withKeyClaimed, src/idempotency/key-claim-statement.ts). The owner check moves into the
 * claim: a missing owner claims nothing, so inserts nothing. The pet's insert has no ON
 * CONFLICT here: a taken id must undo the claim, so it fails the whole statement.
 */
const insertPetClaimingKeyQuery = variants<boolean, PetWithEventArgs & KeyClaimArgs, { id: number }>(
  (checkOwner) => (checkOwner ? 'owner' : 'no-owner'),
  (checkOwner) => (db, p) =>
    withKeyClaimed(db, p, checkOwner ? userExists(p) : sql<boolean>`true`)
      .with('inserted_pet', (qc) =>
        qc
          .insertInto('pets')
          .columns(NEW_PET_COLUMNS)
          .expression(
            qc.selectFrom('key_claim').select(newPetValues(p)).where('key_claim.account_id', 'is not', null),
          )
          .returning('id'),
      )
      .with('inserted_event', () => insertEventFor('inserted_pet', p))
      .selectFrom('inserted_pet')
      .select('id'),
)

/**
 * PostgreSQL only: insertPetWithEvent that also claims an Idempotency-Key in the same statement,
 * storing as its response what `claimOf` builds from the pet as it will be stored. Answers the
 * pet; `'id taken'` when the account already has pet `id` (nothing written); undefined when the
 * key was not claimed or the owner is not the account's (nothing written either: the caller's
 * transactional claim tells which, and replays or refuses).
 */
export async function insertPetClaimingKey(
  db: Db,
  insert: NewPetInsert,
  claimOf: (pet: Pet) => KeyClaimArgs,
): Promise<Pet | 'id taken' | undefined> {
  const { pet, checkOwner, args } = newPetStatement(insert)
  try {
    const [inserted] = await insertPetClaimingKeyQuery(checkOwner).execute(
      db,
      Object.assign(args, claimOf(pet)),
    )
    return inserted === undefined ? undefined : pet
  } catch (error) {
    if (isPetIdTaken(error)) return 'id taken'
    throw error
  }
}

const findPetQuery = prepareQuery<{ id: number; accountId: string }, PetRow>((db, p) =>
  db.selectFrom('pets').selectAll().where('id', '=', p('id')).where('account_id', '=', p('accountId')),
)

export async function findPet(db: Db, accountId: string, id: number): Promise<Pet | undefined> {
  const [row] = await findPetQuery.execute(db, { id, accountId })
  return row === undefined ? undefined : toPet(row)
}

type PetColumns = Partial<Insertable<PetsTable>>

/** One UPDATE per set of columns written, each prepared once. */
type UpdateArgs = PetColumns & { id: number; account_id: string; version: number; next_version: number }

/** The pet's UPDATE at the version read: updatePetAtVersion's, and updatePetWithEvent's first step. */
function updateAtVersion(
  qc: QueryCreator<Database>,
  columns: (keyof PetColumns)[],
  p: Placeholder<UpdateArgs>,
) {
  return qc
    .updateTable('pets')
    .set(Object.fromEntries(columns.map((column) => [column, p(column)])) as PetColumns)
    .set({ version: p('next_version'), updated_at: p('updated_at') })
    .where('id', '=', p('id'))
    .where('account_id', '=', p('account_id'))
    .where('version', '=', p('version'))
}

// No RETURNING, as for insertPetQuery: the row the update leaves is petAfter's.
const updatePetQuery = variants<(keyof PetColumns)[], UpdateArgs, UpdateResult>(
  (columns) => columns.join(),
  (columns) => (db, p) => updateAtVersion(db, columns, p),
)

/**
 * The pet as a change leaves it: `current` with `fields`, the next version, updated at `at`,
 * through the same conversions as the stored row (so JSON columns read back alike).
 */
function petAfter(current: Pet, fields: PetFields, at: string): Pet {
  const row = newPetRow(current.accountId, current.id, current, current.createdAt)
  return toPet(Object.assign(row, toColumns(fields), { version: current.version + 1, updated_at: at }))
}

/** Writes the fields only if the pet is still at `current.version`; undefined when it is not (or gone). */
export async function updatePetAtVersion(
  db: Db,
  current: Pet,
  fields: PetFields,
  at: string,
): Promise<Pet | undefined> {
  const columns = toColumns(fields)
  const query = updatePetQuery(Object.keys(columns) as (keyof PetColumns)[])
  const changed = await query.executeWrite(db, Object.assign(columns, versionArgs(current, at)))
  return changed === 1 ? petAfter(current, fields, at) : undefined
}

/** The pet an update writes to, and what its version becomes. */
function versionArgs(current: Pet, at: string) {
  return {
    next_version: current.version + 1,
    updated_at: at,
    id: current.id,
    account_id: current.accountId,
    version: current.version,
  }
}

type DeleteArgs = { id: number; account_id: string; version: number }

/** The pet's DELETE at the version read: deletePetAtVersion's, and deletePetWithEvent's first step. */
function deleteAtVersion(qc: QueryCreator<Database>, p: Placeholder<DeleteArgs>) {
  return qc
    .deleteFrom('pets')
    .where('id', '=', p('id'))
    .where('account_id', '=', p('account_id'))
    .where('version', '=', p('version'))
}

const deletePetQuery = prepareQuery<DeleteArgs, DeleteResult>((db, p) => deleteAtVersion(db, p))

export async function deletePetAtVersion(
  db: Db,
  accountId: string,
  id: number,
  version: number,
): Promise<boolean> {
  return (await deletePetQuery.executeWrite(db, { id, account_id: accountId, version })) > 0
}

type UpdateWithEventArgs = UpdateArgs &
  EventArgs & {
    owner?: string
    /** The uploaded images the new photo URLs still name (the `pruneImages` variant only). */
    keep_images?: string[]
  }

interface UpdateShape {
  columns: (keyof PetColumns)[]
  checkOwner: boolean
  pruneImages: boolean
}

/**
 * PostgreSQL only: updatePetAtVersion's UPDATE and the event's insert in one statement, as
 * insertPetWithEventQuery does for a create. The update's WHERE holds the version (and the new
 * owner's existence when the change names one), so a pet that moved on, or a missing owner,
 * changes nothing and records no event; one row answers either way, with `owner_found`. When
 * the photo URLs change, the uploaded images they no longer name go in the same statement (an
 * image lives only as long as a photo URL of its pet names it; deleteImagesOfPetExcept).
 */
const updatePetWithEventQuery = variants<UpdateShape, UpdateWithEventArgs, PetWithEventRow>(
  ({ columns, checkOwner, pruneImages }) =>
    `${columns.join()}${checkOwner ? ':owner' : ''}${pruneImages ? ':images' : ''}`,
  ({ columns, checkOwner, pruneImages }) =>
    (db, p) =>
      db
        .with('updated_pet', (qc) =>
          updateAtVersion(qc, columns, p)
            .$if(checkOwner, (q) => q.where(userExists(p)))
            .returning('id'),
        )
        .with('inserted_event', () => insertEventFor('updated_pet', p))
        // Without images to prune this CTE is a SELECT nothing refers to, which PostgreSQL
        // does not run.
        .with('pruned_images', () =>
          pruneImages
            ? sql<CteRow>`(delete from pet_images
                where account_id = ${p('account_id')} and pet_id in (select id from updated_pet)
                  and not (name = any(${p('keep_images')})))`
            : sql<CteRow>`(select 1)`,
        )
        .selectFrom(sql<{ one: number }>`(select 1)`.as('one'))
        .leftJoin('updated_pet', (join) => join.onTrue())
        .select('updated_pet.id')
        .select((checkOwner ? userExists(p) : sql<boolean>`true`).as('owner_found')),
)

/**
 * PostgreSQL only: writes `fields` to the pet if it is still at `version` and inserts the event
 * `eventOf` builds from the pet as it will then be (`current` with `fields`, the next version,
 * `at`), in one statement that needs no transaction around it. `pet` is undefined when nothing
 * changed: `ownerFound` false means `fields.ownerId` is not a user of the account, otherwise
 * the pet moved past `version` (or is gone). `keepImages`, given when the photo URLs change,
 * names the uploaded images they still point at; the pet's others are deleted with the update.
 */
export async function updatePetWithEvent(
  db: Db,
  current: Pet,
  fields: PetFields,
  at: string,
  eventOf: (updated: Pet) => NewEventRow,
  keepImages?: string[],
): Promise<{ pet: Pet | undefined; ownerFound: boolean }> {
  const columns = toColumns(fields)
  const updated = petAfter(current, fields, at)
  const event = eventOf(updated)
  const checkOwner = fields.ownerId != null
  const query = updatePetWithEventQuery({
    columns: Object.keys(columns) as (keyof PetColumns)[],
    checkOwner,
    pruneImages: keepImages !== undefined,
  })
  const args: UpdateWithEventArgs = Object.assign(
    columns,
    versionArgs(current, at),
    eventArgs(event),
    keepImages === undefined ? undefined : { keep_images: keepImages },
    checkOwner ? { owner: fields.ownerId as string } : undefined,
  )
  const [answer] = await query.execute(db, args)
  if (answer === undefined) throw new Error('updatePetWithEvent answered no row.')
  return { pet: answer.id === null ? undefined : updated, ownerFound: answer.owner_found }
}

const deletePetWithEventQuery = prepareQuery<DeleteArgs & EventArgs, { id: number }>((db, p) =>
  db
    .with('deleted_pet', (qc) => deleteAtVersion(qc, p).returning('id'))
    .with('inserted_event', () => insertEventFor('deleted_pet', p))
    .selectFrom('deleted_pet')
    .select('id'),
)

/**
 * PostgreSQL only: deletePetAtVersion's DELETE and the event's insert in one statement; false,
 * and no event, when the pet moved past `version` (or is gone).
 */
export async function deletePetWithEvent(
  db: Db,
  accountId: string,
  id: number,
  version: number,
  event: NewEventRow,
): Promise<boolean> {
  const rows = await deletePetWithEventQuery.execute(
    db,
    Object.assign({ id, account_id: accountId, version }, eventArgs(event)),
  )
  return rows.length > 0
}

export interface PetListQuery {
  limit: number
  startingAfter?: number
  endingBefore?: number
  status?: PetStatus[]
  species?: string
  ownerId?: string
}

/** Which filters a page query has, and which way it walks: one prepared query each. */
interface PageShape {
  statuses: number
  species: boolean
  ownerId: boolean
  walk: Walk
}

interface PageArgs {
  accountId: string
  species?: string
  ownerId?: string
  cursor?: number
  take: number
  [status: `status${number}`]: PetStatus
}

const pageQuery = variants<PageShape, PageArgs, PetRow>(
  (shape) => `${shape.statuses}:${shape.species}:${shape.ownerId}:${shape.walk}`,
  (shape) => (db, p) =>
    db
      .selectFrom('pets')
      .selectAll()
      .where('account_id', '=', p('accountId'))
      .$if(shape.statuses > 0, (q) =>
        q.where(
          'status',
          'in',
          Array.from({ length: shape.statuses }, (_, i) => p(`status${i}`)),
        ),
      )
      .$if(shape.species, (q) => q.where('species', '=', p('species')!))
      .$if(shape.ownerId, (q) => q.where('owner_id', '=', p('ownerId')!))
      .$call((q) => seqWindow(q, shape.walk, p('cursor'), p('take'))),
)

const seqOfQuery = prepareQuery<{ id: number; accountId: string }, { seq: number }>((db, p) =>
  db.selectFrom('pets').select('seq').where('account_id', '=', p('accountId')).where('id', '=', p('id')),
)

/** One page, newest first (db/keyset-page.ts); undefined when a cursor names no pet of the account. */
export async function listPets(
  db: Db,
  accountId: string,
  query: PetListQuery,
): Promise<Page<Pet> | undefined> {
  // Distinct statuses (an enum of three): a bounded number of query shapes.
  const statuses = [...new Set(query.status ?? [])]
  const page = await keysetPage(
    query,
    async (id) => (await seqOfQuery.execute(db, { id, accountId }))[0]?.seq,
    (walk, cursor, take) => {
      const args: PageArgs = { accountId, take, cursor }
      if (query.species !== undefined) args.species = query.species
      if (query.ownerId !== undefined) args.ownerId = query.ownerId
      statuses.forEach((status, i) => {
        args[`status${i}`] = status
      })
      const shape = {
        statuses: statuses.length,
        species: query.species !== undefined,
        ownerId: query.ownerId !== undefined,
        walk,
      }
      return pageQuery(shape).execute(db, args)
    },
  )
  return page === undefined ? undefined : { rows: page.rows.map(toPet), hasMore: page.hasMore }
}

export async function countPetsOfOwner(db: Db, accountId: string, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('pets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function countPetsByStatus(db: Db, accountId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('pets')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .groupBy('status')
    .execute()
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
}

/** Every pet of the account in one of `statuses`, oldest first, at most `limit` (v2 findByStatus). */
export async function findPetsByStatus(
  db: Db,
  accountId: string,
  statuses: PetStatus[],
  limit: number,
): Promise<Pet[]> {
  const rows = await db
    .selectFrom('pets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', 'in', statuses)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute()
  return rows.map(toPet)
}

/**
 * Pets carrying a tag with one of `names`, oldest first, at most `limit` (v2 findByTags). Tags
 * are JSON text on both dialects: a LIKE narrows the rows, the exact match is made on the parsed
 * tags.
 */
export async function findPetsByTags(
  db: Db,
  accountId: string,
  names: string[],
  limit: number,
): Promise<Pet[]> {
  const wanted = new Set(names)
  // One LIKE per name, OR-ed: SQLite nests them one level each and refuses past 1,000 levels
  // (SQLITE_MAX_EXPR_DEPTH), so the route takes at most FIND_VALUES_LIMIT (100) names.
  // `%` and `_` in a name only widen the LIKE; a backslash means different things to the two
  // dialects' LIKE, so such a search reads every pet of the account instead.
  const prefilter = !names.some((n) => n.includes('\\'))
  const out: Pet[] = []
  let after = 0
  for (;;) {
    const rows = await db
      .selectFrom('pets')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('seq', '>', after)
      .$if(prefilter, (q) =>
        q.where((eb) =>
          eb.or(names.map((name) => eb('tags', 'like', `%${JSON.stringify({ name }).slice(1, -1)}%`))),
        ),
      )
      .orderBy('seq', 'asc')
      .limit(500)
      .execute()
    for (const row of rows) {
      const pet = toPet(row)
      if (pet.tags?.some((t) => t.name !== undefined && wanted.has(t.name))) out.push(pet)
      if (out.length >= limit) return out
    }
    if (rows.length < 500) return out
    after = rows[rows.length - 1]!.seq
  }
}

/** The account's distinct pet species, for the filter's choices. */
export async function listSpecies(db: Db, accountId: string, limit = 100): Promise<string[]> {
  const rows = await db
    .selectFrom('pets')
    .select('species')
    .distinct()
    .where('account_id', '=', accountId)
    .where('species', 'is not', null)
    .orderBy('species')
    .limit(limit)
    .execute()
  return rows.map((r) => r.species).filter((s): s is string => s !== null)
}

/** Pets per owner for the given users, in one query. */
export async function countPetsByOwners(
  db: Db,
  accountId: string,
  ownerIds: string[],
): Promise<Map<string, number>> {
  if (ownerIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('pets')
    .select(['owner_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .where('owner_id', 'in', ownerIds)
    .groupBy('owner_id')
    .execute()
  return new Map(rows.map((r) => [r.owner_id ?? '', Number(r.n)]))
}

/** The names of the account's pets with these ids, in one query (a deleted pet has none). */
export async function petNamesByIds(db: Db, accountId: string, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('pets')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute()
  return new Map(rows.map((r) => [Number(r.id), r.name]))
}

/** Deletes every pet of the account (their images go with them: the foreign key cascades). */
export async function deleteAllPetsOfAccount(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('pets').where('account_id', '=', accountId).execute()
}
