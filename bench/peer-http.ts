import formbody from '@fastify/formbody'
import Fastify, { type FastifyInstance } from 'fastify'

/**
 * What the peers (peer-server.ts, orm-peer-server.ts) share: the create case's form body and
 * its JSON schema, and a Fastify 5 server with form bodies and `/healthz` on PORT, closed on
 * SIGTERM. Each peer adds its own `POST /v1/pet`.
 */

export interface PetBody {
  name: string
  species: string
  breed?: string
}

export const petBodySchema = {
  type: 'object',
  required: ['name', 'species'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    species: { type: 'string', minLength: 1, maxLength: 100 },
    breed: { type: 'string', maxLength: 100 },
  },
} as const

export async function servePeer(addRoutes: (app: FastifyInstance) => void): Promise<void> {
  const app = Fastify({ logger: false, keepAliveTimeout: 72_000 })
  await app.register(formbody)
  app.get('/healthz', async () => ({ status: 'ok' }))
  addRoutes(app)
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
  process.on('SIGTERM', () => {
    app.close().then(() => process.exit(0))
  })
}
