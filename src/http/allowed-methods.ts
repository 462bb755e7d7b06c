import type { FastifyInstance } from 'fastify'
import FindMyWay from 'find-my-way'

/** The methods a 405 may list (anything else the router does not serve anyway). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/**
 * Fastify answers a known path with an unknown method through the not-found handler. To tell
 * that apart from an unknown path (405 with `Allow`, RFC 9110 §15.5.6, instead of 404), every
 * route is mirrored into a router of paths alone, with the options Fastify's own router has.
 * Register before the routes: the onRoute hook sees only routes added after it.
 */
export function trackAllowedMethods(
  app: FastifyInstance,
  options: { ignoreTrailingSlash: boolean; maxParamLength: number },
): (url: string) => string[] {
  const router = FindMyWay(options)
  const noop = () => {}
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const name = method.toUpperCase() as FindMyWay.HTTPMethod
      if (!router.hasRoute(name, route.url)) router.on(name, route.url, noop)
    }
  })
  return (url) => {
    const path = url.split('?')[0] ?? ''
    const allowed = METHODS.filter((method) => router.find(method, path) !== null)
    return allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : [...allowed]
  }
}
