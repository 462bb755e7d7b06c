import type { FastifyInstance } from 'fastify'
import { authorizationServerMetadata } from '../../oauth/metadata.ts'

/**
 * RFC 8414 §3: the metadata lives at /.well-known/oauth-authorization-server for an issuer
 * without a path. The document never changes while the process runs: built once, cached by
 * clients for five minutes.
 */
export function registerMetadataRoute(app: FastifyInstance, issuer: string): void {
  const metadata = authorizationServerMetadata(issuer)
  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(metadata),
  )
}
