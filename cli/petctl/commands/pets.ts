/** `petctl pets`: the v1 pet operations (API key), and `update --v2`, the Petstore replace (OAuth). */
import type { PetCreateParams, PetStatus } from '../../../clients/typescript/src/index.ts'
import { group, leaf, type Register, type Run } from '../command.ts'
import { UsageError } from '../errors.ts'
import { printList, show, showDeleted } from '../output.ts'
import { collect, fields, integer, oneOf, petId } from '../parse.ts'

interface PetFlags {
  name?: string
  species?: string
  breed?: string
  ownerId?: string
  status?: string
}

interface ReplaceFlags extends PetFlags {
  v2?: boolean
  photoUrl?: string[]
  tag?: string[]
  category?: string
}

interface ListFlags {
  limit?: string
  startingAfter?: string
  status?: string
  species?: string
  ownerId?: string
  all?: boolean
}

const PET_FIELDS = { name: 'name', species: 'species', breed: 'breed', ownerId: 'owner_id', status: 'status' }
const PET_STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']
const COLUMNS = ['id', 'name', 'species', 'breed', 'owner_id', 'status', 'created_at']

const status = (text: string | undefined) =>
  text === undefined ? undefined : oneOf(text, PET_STATUSES, '--status')

export const registerPets: Register = (program, io) => {
  const pets = group(program, 'pets', 'pets (v1, API key; update --v2: Petstore, OAuth)', [
    'petctl pets list --species dog',
  ])
  leaf(pets, io, 'create', {
    description: 'create a pet (POST /v1/pet)',
    examples: ['petctl pets create --name Rex --species dog --breed collie'],
    action: create,
  })
    .option('--name <name>', 'required')
    .option('--species <species>')
    .option('--breed <breed>')
    .option('--owner-id <user-id>', 'a user of your account (usr_…)')
    .option('--status <status>', 'available (default), pending or sold')
    .option('--idempotency-key <key>', 'one is generated otherwise')
  leaf(pets, io, 'get', {
    description: 'show a pet (GET /v1/pet/ID)',
    examples: ['petctl pets get 1 --json'],
    action: get,
  }).argument('<id>', 'the pet id')
  leaf(pets, io, 'update', {
    description: 'change a pet: some fields (PATCH /v1/pet/ID), or all of it with --v2',
    examples: [
      "petctl pets update 1 --status pending --breed ''",
      'petctl pets update 1 --v2 --name Rex --photo-url https://example.com/rex.jpg --scope write:pets',
    ],
    action: update,
  })
    .argument('<id>', 'the pet id')
    .option('--name <name>')
    .option('--species <species>', '"" clears it')
    .option('--breed <breed>', '"" clears it')
    .option('--owner-id <user-id>', '"" clears it')
    .option('--status <status>', 'available, pending or sold')
    .option('--if-match <etag>', 'refuse (412) if the pet changed since this ETag')
    .option('--v2', 'PUT /v2/pet: replace the whole pet (Petstore body, OAuth token)')
    .option('--photo-url <url>', 'with --v2; repeat for several', collect)
    .option('--tag <name>', 'with --v2; repeat for several', collect)
    .option('--category <name>', 'with --v2')
  leaf(pets, io, 'delete', {
    description: 'delete a pet (DELETE /v1/pet/ID)',
    examples: ['petctl pets delete 1 --if-match \'"3"\''],
    action: remove,
  })
    .argument('<id>', 'the pet id')
    .option('--if-match <etag>', 'refuse (412) if the pet changed since this ETag')
  leaf(pets, io, 'list', {
    description: 'list pets, newest first (GET /v1/pet)',
    examples: ['petctl pets list --limit 20 --species dog', 'petctl pets list --all --json'],
    action: list,
  })
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--status <status>', 'available, pending or sold')
    .option('--species <species>')
    .option('--owner-id <user-id>')
    .option('--all', 'every page (a progress count on a terminal)')
}

async function create(run: Run<PetFlags>): Promise<void> {
  const { flags } = run
  if (flags.name === undefined) throw new UsageError('petctl pets create needs --name NAME.')
  status(flags.status)
  const client = run.client('key')
  const body = { ...fields(flags, PET_FIELDS), name: flags.name } as PetCreateParams
  show(run, await client.pets.create(body, run.options))
}

async function get(run: Run<object>, id: string): Promise<void> {
  const pet = petId(id)
  show(run, await run.client('key').pets.get(pet, run.options))
}

async function update(run: Run<ReplaceFlags>, id: string): Promise<void> {
  const { flags } = run
  const pet = petId(id)
  status(flags.status)
  if (flags.v2 === true || flags.photoUrl !== undefined || flags.tag !== undefined) {
    if (flags.name === undefined)
      throw new UsageError('--v2 replaces the whole pet: give --name (and --photo-url for each photo).')
    const replaced = await run.client('oauth').pets.replace(
      {
        id: pet,
        name: flags.name,
        photoUrls: flags.photoUrl ?? [],
        ...(flags.status === undefined ? {} : { status: status(flags.status) }),
        ...(flags.category === undefined ? {} : { category: { name: flags.category } }),
        ...(flags.tag === undefined ? {} : { tags: flags.tag.map((name) => ({ name })) }),
        ...(flags.species === undefined ? {} : { species: flags.species }),
        ...(flags.breed === undefined ? {} : { breed: flags.breed }),
        ...(flags.ownerId === undefined ? {} : { ownerId: flags.ownerId }),
      },
      run.options,
    )
    show(run, replaced)
    return
  }
  const changes = fields(flags, PET_FIELDS)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --name, --species, --breed, --owner-id or --status.')
  show(run, await run.client('key').pets.update(pet, changes, run.options))
}

async function remove(run: Run<object>, id: string): Promise<void> {
  showDeleted(run, 'pet', await run.client('key').pets.delete(petId(id), run.options))
}

async function list(run: Run<ListFlags>): Promise<void> {
  const { flags } = run
  const params = {
    ...(flags.limit === undefined ? {} : { limit: integer(flags.limit, '--limit', 1) }),
    ...(flags.startingAfter === undefined
      ? {}
      : { starting_after: integer(flags.startingAfter, '--starting-after', 1) }),
    ...(flags.status === undefined ? {} : { status: status(flags.status) }),
    ...(flags.species === undefined ? {} : { species: flags.species }),
    ...(flags.ownerId === undefined ? {} : { owner_id: flags.ownerId }),
  }
  // --all walks every page: the largest page size makes that the fewest requests.
  const pages = run
    .client('key')
    .pets.list({ ...(flags.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(pages, flags.all === true, 'pets', COLUMNS, run)
}
