import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type Provider from 'oidc-provider'
import { findAccountById, modeOf } from '../../accounts/accounts-service.ts'
import type { Db } from '../../db/schema.ts'
import { grantConsent, type InteractionDetails, requestedScopes } from '../../oauth/consent.ts'
import { OAUTH_MOUNT } from '../../oauth/provider.ts'
import { attemptSignIn, busyText, minutesText, type SignInOutcome } from '../../sign-in/sign-in.ts'
import { renderConsentPage, renderErrorPage, renderSignInPage } from './interaction-pages.ts'

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  // The web kit's stylesheet and script, served under /dashboard/assets (interaction-pages.ts). No
  // form-action: Chrome applies it to the redirect back to the client after consent.
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
}

const Params = Type.Object({ uid: Type.String({ maxLength: 100 }) })
const SignInBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  password: Type.Optional(Type.String({ maxLength: 1000 })),
})

/**
 * The sign-in and consent steps of `/oauth/authorize` (oidc-provider "interactions"). The
 * provider's interaction cookie ties each step to the browser that started it, which is also
 * what stops a forged form post: another site cannot know the uid and send the cookie with it.
 */
export async function registerInteractionRoutes(
  fastify: FastifyInstance,
  { provider, db }: { provider: Provider; db: Db },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const base = `${OAUTH_MOUNT}/interaction`
  const schema = { hide: true, params: Params }

  async function details(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<InteractionDetails | undefined> {
    try {
      return await provider.interactionDetails(request.raw, reply.raw)
    } catch {
      reply
        .code(400)
        .headers(HTML_HEADERS)
        .send(
          renderErrorPage(
            'invalid_request',
            'This sign-in request has expired or was opened in another browser.',
          ),
        )
      return undefined
    }
  }

  async function clientName(clientId: unknown): Promise<string> {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined
    return client?.clientName ?? (typeof clientId === 'string' ? clientId : 'An application')
  }

  /** A sandbox's app reaches the signed-in account's sandbox only (src/oauth/provider.ts). */
  async function isSandboxApp(clientId: unknown): Promise<boolean> {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined
    const ownerId = client?.['account_id' as keyof typeof client]
    const owner = typeof ownerId === 'string' ? await findAccountById(db, ownerId) : undefined
    return owner !== undefined && modeOf(owner) === 'sandbox'
  }

  async function showConsent(reply: FastifyReply, interaction: InteractionDetails): Promise<FastifyReply> {
    const account = await findAccountById(db, interaction.session?.accountId ?? '')
    return reply.headers(HTML_HEADERS).send(
      renderConsentPage({
        action: `${base}/${interaction.uid}/consent`,
        abortAction: `${base}/${interaction.uid}/abort`,
        clientName: await clientName(interaction.params.client_id),
        email: account?.email ?? '',
        scopes: requestedScopes(interaction),
        sandbox: await isSandboxApp(interaction.params.client_id),
      }),
    )
  }

  app.get(`${base}/:uid`, { schema }, async (request, reply) => {
    const interaction = await details(request, reply)
    if (interaction === undefined) return reply
    if (interaction.prompt.name === 'login') {
      return reply.headers(HTML_HEADERS).send(
        renderSignInPage({
          action: `${base}/${interaction.uid}/login`,
          clientName: await clientName(interaction.params.client_id),
        }),
      )
    }
    return showConsent(reply, interaction)
  })

  app.post(`${base}/:uid/login`, { schema: { ...schema, body: SignInBody } }, async (request, reply) => {
    const interaction = await details(request, reply)
    if (interaction === undefined) return reply
    const email = request.body.email ?? ''
    // The dashboard's password sign-in (src/sign-in/): the same guessing limits (per account and per address) and the
    // same constant-cost check for unknown emails.
    const outcome = await attemptSignIn(db, { email, password: request.body.password ?? '', ip: request.ip })
    if (outcome.kind !== 'ok') {
      const refused = outcome.kind === 'limited' || outcome.kind === 'busy'
      if (refused) reply.header('retry-after', String(outcome.retryAfterSeconds))
      return reply
        .code(refused ? 429 : 401)
        .headers(HTML_HEADERS)
        .send(
          renderSignInPage({
            action: `${base}/${interaction.uid}/login`,
            clientName: await clientName(interaction.params.client_id),
            email,
            error: signInError(outcome),
          }),
        )
    }
    const to = await provider.interactionResult(
      request.raw,
      reply.raw,
      { login: { accountId: outcome.accountId } },
      { mergeWithLastSubmission: false },
    )
    return reply.redirect(to, 303)
  })

  app.post(`${base}/:uid/consent`, { schema }, async (request, reply) => {
    const interaction = await details(request, reply)
    if (interaction === undefined) return reply
    const accountId = interaction.session?.accountId
    if (interaction.prompt.name !== 'consent' || accountId === undefined) {
      return reply.redirect(`${base}/${interaction.uid}`, 303)
    }
    const grantId = await grantConsent(provider, interaction, accountId)
    const to = await provider.interactionResult(
      request.raw,
      reply.raw,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    )
    return reply.redirect(to, 303)
  })

  app.post(`${base}/:uid/abort`, { schema }, async (request, reply) => {
    const interaction = await details(request, reply)
    if (interaction === undefined) return reply
    const to = await provider.interactionResult(
      request.raw,
      reply.raw,
      { error: 'access_denied', error_description: 'The account holder denied the request.' },
      { mergeWithLastSubmission: false },
    )
    return reply.redirect(to, 303)
  })
}

function signInError(outcome: Exclude<SignInOutcome, { kind: 'ok' }>): string {
  switch (outcome.kind) {
    case 'limited':
      return `Too many failed sign-in attempts. For your security, try again in ${minutesText(outcome.retryAfterSeconds)}.`
    case 'busy':
      return `Too many passwords are being checked for you right now. Try again in ${busyText(outcome.retryAfterSeconds)}.`
    case 'invalid':
      return 'That email and password do not match an account.'
  }
}
