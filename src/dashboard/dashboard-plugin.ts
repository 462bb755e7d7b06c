import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import csrf from '@fastify/csrf-protection'
import helmet from '@fastify/helmet'
import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyInstance } from 'fastify'
import { ApiError } from '../errors/api-error.ts'
import { assertNoNul } from '../errors/nul-characters.ts'
import { loadOrCreate } from '../oauth/oauth-keys.ts'
import type { OAuthServer } from '../oauth/oauth-server.ts'
import { DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from '../sign-in/sign-in-limits.ts'
import { ASSETS_DIR } from '../web/assets-dir.ts'
import { csrfBinding, csrfToken, sendPage } from './context.ts'
import { fillModeSlots } from './mode-switch.ts'
import { accountRoutes } from './routes/account-routes.ts'
import { clientsRoutes } from './routes/clients-routes.ts'
import { dataRoutes } from './routes/data-routes.ts'
import { eventsRoutes } from './routes/events-routes.ts'
import { keysRoutes } from './routes/keys-routes.ts'
import { ordersRoutes } from './routes/orders-routes.ts'
import { requestLogsRoutes } from './routes/request-logs-routes.ts'
import { sandboxRoutes } from './routes/sandbox-routes.ts'
import { webhooksRoutes } from './routes/webhooks-routes.ts'
import { SESSION_COOKIE, sessionFromCookie } from './sessions.ts'
import { messagePage } from './views/account-views.ts'

export interface DashboardOptions {
  /** Sign-in guessing limits (tests tighten or loosen them). */
  limits?: Partial<SignInLimits>
  /** The OAuth authorisation server, for the OAuth apps pages; absent: those pages say so. */
  oauth?: OAuthServer
}

/**
 * The account holders' dashboard at /dashboard: server-rendered HTML that works without
 * JavaScript, with a small local script for copy buttons and the password meter. Register with
 * `{ prefix: '/dashboard' }`. Cookies, helmet's headers (a strict CSP) and CSRF protection are
 * registered inside this encapsulated plugin only, so the JSON API and /docs are unaffected.
 */
export async function dashboard(app: FastifyInstance, options: DashboardOptions = {}): Promise<void> {
  const limits = { ...DEFAULT_SIGN_IN_LIMITS, ...options.limits }
  const db = app.deps.db

  // Dashboard pages are not API operations: keep them out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
  })

  if (!app.hasRequestDecorator('cookies')) await app.register(cookie)
  await app.register(helmet, {
    // Everything the pages load comes from this origin; nothing inline, nothing framed.
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    crossOriginEmbedderPolicy: false,
  })
  // Double-submit tokens: the secret in an HttpOnly cookie, the token in each form, bound to the
  // session (csrfBinding) by an HMAC whose key every instance shares through the database.
  const hmacKey = (await loadOrCreate(db, 'dashboard_csrf', async () =>
    randomBytes(32).toString('base64url'),
  )) as string
  await app.register(csrf, {
    cookieKey: '_csrf',
    cookieOpts: { path: '/dashboard', sameSite: 'lax', httpOnly: true, secure: 'auto' },
    getUserInfo: csrfBinding,
    csrfOpts: { hmacKey },
  })
  await app.register(fastifyStatic, {
    root: fileURLToPath(ASSETS_DIR),
    prefix: '/assets/',
    decorateReply: false,
    maxAge: '1h',
  })

  app.decorateRequest('dashboardSession', null)
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/dashboard/assets/')) return
    request.dashboardSession = await sessionFromCookie(db, request.cookies[SESSION_COOKIE])
    if (request.dashboardSession !== null || request.routeOptions.config.dashboardPublic === true) return
    const next = request.method === 'GET' ? `&next=${encodeURIComponent(request.url)}` : ''
    return reply.redirect(`/dashboard/sign-in?notice=signed_in_required${next}`, 303)
  })
  // Forms have no schema: refuse a NUL anywhere before a handler reads the database with it.
  app.addHook('preValidation', async (request) => {
    assertNoNul({ body: request.body, query: request.query, params: request.params })
  })
  app.addHook('onSend', async (request, reply, payload) => {
    // Pages show secrets and account data: never store them in any cache.
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      reply.header('cache-control', 'no-store')
      if (typeof payload === 'string')
        return fillModeSlots(payload, request.dashboardSession, () => csrfToken(reply))
    }
    return payload
  })

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const code = (error as FastifyError).code
    if (code === 'FST_CSRF_INVALID_TOKEN' || code === 'FST_CSRF_MISSING_SECRET') {
      return sendPage(
        reply,
        messagePage({
          title: 'This form has expired',
          text: 'For your security, forms are only accepted from a page this dashboard just showed you. Go back, reload the page and try again.',
          link: { href: '/dashboard', label: 'Back to the dashboard' },
        }),
        403,
      )
    }
    const status = error instanceof ApiError ? error.status : (error.statusCode ?? 500)
    if (status === 404) return notFound(reply, error instanceof ApiError ? error.detail : undefined)
    if (status < 500) {
      return sendPage(
        reply,
        messagePage({
          title: 'That did not work',
          text: error instanceof ApiError ? error.detail : 'The request was not valid.',
          link: { href: '/dashboard', label: 'Back to the dashboard' },
        }),
        status,
      )
    }
    request.log.error({ err: error }, 'dashboard request failed')
    return sendPage(
      reply,
      messagePage({
        title: 'Something went wrong',
        text: `Something went wrong on our side; nothing was changed. Please try again (request ${request.id}).`,
        link: { href: '/dashboard', label: 'Back to the dashboard' },
      }),
      500,
    )
  })
  const notFound = (reply: import('fastify').FastifyReply, detail?: string) =>
    sendPage(
      reply,
      messagePage({
        title: 'Page not found',
        text: detail ?? 'There is nothing at this address.',
        link: { href: '/dashboard', label: 'Back to the dashboard' },
      }),
      404,
    )
  app.setNotFoundHandler((_request, reply) => notFound(reply))

  await app.register(accountRoutes(limits))
  await app.register(keysRoutes)
  await app.register(clientsRoutes(options.oauth))
  await app.register(dataRoutes)
  await app.register(ordersRoutes)
  await app.register(eventsRoutes)
  await app.register(requestLogsRoutes)
  await app.register(webhooksRoutes)
  await app.register(sandboxRoutes)
}
