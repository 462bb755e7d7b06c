import type { FastifyRequest } from 'fastify'
import type { TrustProxy } from '../config/config.ts'

type TrustFunction = (address: string, hop: number) => boolean

/**
 * TRUST_PROXY in the form Fastify's `trustProxy` takes. A hop count becomes a function trusting
 * the nearest `hops` peers (the socket's, then X-Forwarded-For from its end): Fastify itself
 * ignores numbers, since a count cannot tell a proxy from a client that connects directly —
 * which is why the README says to give a count only when clients cannot reach the service
 * except through the proxies. Addresses and ranges go to proxy-addr as they are.
 */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | TrustFunction {
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return trust
}

/**
 * oidc-provider (Koa, with `proxy` on) reads X-Forwarded-Proto, -Host and -For without asking
 * who sent them. Before a request is handed to it, those headers are set to what Fastify
 * concluded under TRUST_PROXY, so both see the same client, protocol (Secure cookies) and host.
 */
export function forwardTrustedView(request: FastifyRequest): void {
  const headers = request.raw.headers
  headers['x-forwarded-proto'] = request.protocol
  headers['x-forwarded-host'] = request.host
  headers['x-forwarded-for'] = request.ip
}
