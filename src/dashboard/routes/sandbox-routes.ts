import type { FastifyInstance } from 'fastify'
import { findAccountById } from '../../accounts/accounts-service.ts'
import { ApiError } from '../../errors/api-error.ts'
import { openSandbox, resetSandbox } from '../../sandboxes/sandboxes-service.ts'
import { csrfToken, field, noticeFrom, sendPage, sessionOf } from '../context.ts'
import { switchSessionMode } from '../sessions.ts'
import { resetSandboxPage, sandboxPage } from '../views/sandbox-views.ts'

/** The live account's sandbox: create it, switch between it and live, reset it. */
export async function sandboxRoutes(app: FastifyInstance): Promise<void> {
  const db = app.deps.db

  app.get('/sandbox', async (request, reply) => {
    const session = sessionOf(request)
    const sandbox = session.sandboxId === null ? undefined : await findAccountById(db, session.sandboxId)
    return sendPage(
      reply,
      sandboxPage({
        csrf: csrfToken(reply),
        email: session.email,
        notice: noticeFrom(request),
        sandbox,
        mode: session.mode,
      }),
    )
  })

  // Creating it twice (two tabs) opens the same one: one sandbox per live account.
  app.post('/sandbox', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    await openSandbox(db, session.liveAccountId)
    await switchSessionMode(db, session.idHash, 'sandbox')
    return reply.redirect('/dashboard?notice=sandbox_created', 303)
  })

  app.post('/sandbox/switch', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    const mode = field(request.body, 'mode')
    if (mode !== 'live' && mode !== 'sandbox') {
      throw new ApiError('parameter_invalid', 'Choose live or sandbox.')
    }
    // No sandbox yet: the sandbox page offers to create one.
    if (mode === 'sandbox' && session.sandboxId === null) return reply.redirect('/dashboard/sandbox', 303)
    await switchSessionMode(db, session.idHash, mode)
    return reply.redirect('/dashboard', 303)
  })

  app.get('/sandbox/reset', async (request, reply) => {
    const session = sessionOf(request)
    if (session.sandboxId === null) return reply.redirect('/dashboard/sandbox', 303)
    return sendPage(
      reply,
      resetSandboxPage({ csrf: csrfToken(reply), email: session.email, sandboxId: session.sandboxId }),
    )
  })

  app.post('/sandbox/reset', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = sessionOf(request)
    if (session.sandboxId === null) return reply.redirect('/dashboard/sandbox', 303)
    // Always the signed-in account's own sandbox: no id comes from the form.
    await resetSandbox(db, session.sandboxId)
    return reply.redirect('/dashboard/sandbox?notice=sandbox_reset', 303)
  })
}
