import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { listApiKeys, toApiKeyInfo } from '../../keys/keys-service.ts'
import { PET_STATUSES, type PetStatus } from '../../pets/pet-status.ts'
import {
  countPetsByOwners,
  countPetsByStatus,
  findPet,
  listPets,
  listSpecies,
} from '../../pets/pets-service.ts'
import { countUsers, findUser, listUserNames, listUsers, userNamesByIds } from '../../users/users-service.ts'
import { baseUrlOf, csrfToken, noticeFrom, positiveInt, query, sendPage, sessionOf } from '../context.ts'
import { overviewPage, petPage, petsPage, userPage, usersPage } from '../views/data-views.ts'
import { keyState } from '../views/keys-views.ts'

const PAGE_SIZE = 20

/** The overview, and browsing pets and users (read-only: changes go through the API). */
export async function dataRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  app.get('/', async (request, reply) => {
    const session = sessionOf(request)
    const [counts, users, keys] = await Promise.all([
      countPetsByStatus(db, session.accountId),
      countUsers(db, session.accountId),
      listApiKeys(db, session.accountId),
    ])
    const activeKeys = keys
      .map(toApiKeyInfo)
      .filter((k) => ['active', 'expiring'].includes(keyState(k))).length
    return sendPage(
      reply,
      overviewPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        counts,
        users,
        activeKeys,
        baseUrl: baseUrlOf(request),
        mode: session.mode,
      }),
    )
  })

  app.get('/pets', async (request, reply) => {
    const session = sessionOf(request)
    const status = query(request, 'status')
    const filters = {
      status: (PET_STATUSES as readonly string[]).includes(status) ? status : '',
      species: query(request, 'species').slice(0, 200),
      owner: query(request, 'owner').slice(0, 200),
    }
    const startingAfter = positiveInt(query(request, 'starting_after'))
    const endingBefore = positiveInt(query(request, 'ending_before'))
    const [page, counts, species, owners] = await Promise.all([
      listPets(db, session.accountId, {
        limit: PAGE_SIZE,
        ...(filters.status === '' ? {} : { status: [filters.status as PetStatus] }),
        ...(filters.species === '' ? {} : { species: filters.species }),
        ...(filters.owner === '' ? {} : { ownerId: filters.owner }),
        ...(endingBefore !== undefined
          ? { endingBefore }
          : startingAfter !== undefined
            ? { startingAfter }
            : {}),
      }),
      countPetsByStatus(db, session.accountId),
      listSpecies(db, session.accountId),
      listUserNames(db, session.accountId),
    ])
    const ownerIds = [...new Set(page.pets.map((p) => p.ownerId).filter((id): id is string => id !== null))]
    const ownerNames = await userNamesByIds(db, session.accountId, ownerIds)
    // Going back (ending_before), "has more" means newer pages; otherwise older ones.
    const hasNewer = endingBefore !== undefined ? page.hasMore : startingAfter !== undefined
    const hasOlder = endingBefore !== undefined ? true : page.hasMore
    return sendPage(
      reply,
      petsPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        pets: page.pets,
        counts,
        filters,
        species,
        owners,
        ownerNames,
        hasNewer,
        hasOlder,
      }),
    )
  })

  app.get('/pets/:id', async (request, reply) => {
    const session = sessionOf(request)
    const id = positiveInt((request.params as { id: string }).id)
    const pet = id === undefined ? undefined : await findPet(db, session.accountId, id)
    if (pet === undefined) throw new ApiError('pet_not_found', 'There is no such pet in your account.')
    const owner = pet.ownerId === null ? undefined : await findUser(db, session.accountId, pet.ownerId)
    return sendPage(
      reply,
      petPage({ csrf: csrfToken(reply), email: session.email, pet, owner, baseUrl: baseUrlOf(request) }),
    )
  })

  app.get('/users', async (request, reply) => {
    const session = sessionOf(request)
    const emailFilter = query(request, 'email').slice(0, 254)
    const startingAfter = query(request, 'starting_after').slice(0, 100) || undefined
    const endingBefore = query(request, 'ending_before').slice(0, 100) || undefined
    const [page, total] = await Promise.all([
      listUsers(db, session.accountId, {
        limit: PAGE_SIZE,
        ...(emailFilter === '' ? {} : { email: emailFilter }),
        ...(endingBefore !== undefined
          ? { endingBefore }
          : startingAfter !== undefined
            ? { startingAfter }
            : {}),
      }),
      countUsers(db, session.accountId),
    ])
    const users = page?.rows ?? []
    const petCounts = await countPetsByOwners(
      db,
      session.accountId,
      users.map((u) => u.id),
    )
    const hasMore = page?.hasMore ?? false
    return sendPage(
      reply,
      usersPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        users,
        petCounts,
        email_filter: emailFilter,
        total,
        hasNewer: endingBefore !== undefined ? hasMore : startingAfter !== undefined,
        hasOlder: endingBefore !== undefined ? true : hasMore,
      }),
    )
  })

  app.get('/users/:id', async (request, reply) => {
    const session = sessionOf(request)
    const { id } = request.params as { id: string }
    const user = await findUser(db, session.accountId, id.slice(0, 100))
    if (user === undefined) throw new ApiError('user_not_found', 'There is no such user in your account.')
    const { pets, hasMore } = await listPets(db, session.accountId, { limit: 20, ownerId: user.id })
    return sendPage(reply, userPage({ csrf: csrfToken(reply), email: session.email, user, pets, hasMore }))
  })
}
