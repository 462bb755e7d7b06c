import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { PET_STATUSES } from '../../pets/pet-status.ts'
import { countPetsByStatus } from '../../pets/pets-service.ts'
import { InventorySchema } from './pet-schemas.ts'
import { v2Problems } from './problems.ts'

/** The Petstore's store resource: the inventory (orders are not offered, docs/petstore-differences.md). */
export async function v2StoreRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db } = app.deps

  app.get(
    '/store/inventory',
    {
      config: { scope: 'read:pets', apiKeyHeader: true },
      schema: {
        operationId: 'getInventory',
        summary: 'Returns pet inventories by status',
        description:
          'A map of status to the number of your pets in it. Takes an API key in `api_key`, or an OAuth token.',
        tags: ['store'],
        security: [{ api_key: [] }, { petstore_auth: ['read:pets'] }],
        response: { 200: InventorySchema, ...v2Problems() },
      },
    },
    async (request) => {
      const counts = await countPetsByStatus(db, request.principal!.accountId)
      return Object.fromEntries(PET_STATUSES.map((s) => [s, counts[s] ?? 0]))
    },
  )
}
