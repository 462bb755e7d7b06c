import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  createAccountWithPassword,
  findAccountById,
  isEmail,
  normaliseEmail,
  setAccountPassword,
} from '../../accounts/accounts-service.ts'
import { checkPasswordStrength } from '../../accounts/password-strength.ts'
import { type PasswordParty, PasswordWorkBusyError } from '../../accounts/password-work.ts'
import { hashPassword, verifyPassword } from '../../accounts/passwords.ts'
import { attemptSignIn, busyText, countedGuess, minutesText } from '../../sign-in/sign-in.ts'
import {
  attemptNotChecked,
  attemptSucceeded,
  reserveSignUp,
  type SignInLimits,
} from '../../sign-in/sign-in-limits.ts'
import { csrfToken, field, noticeFrom, query, safeNext, sendPage, sessionOf } from '../context.ts'
import { endOtherSessions, endSession, setUnusableSessionCookie, startSession } from '../sessions.ts'
import { accountPage, signInPage, signUpPage } from '../views/account-views.ts'

function userAgent(request: FastifyRequest): string | undefined {
  return request.headers['user-agent']
}

/** A password hash, or the refusal of the password work queue (a page says "busy"). */
async function hashOrBusy(password: string, party: PasswordParty): Promise<string | PasswordWorkBusyError> {
  try {
    return await hashPassword(password, party)
  } catch (error) {
    if (error instanceof PasswordWorkBusyError) return error
    throw error
  }
}

/** A new account's id, or undefined when the email already has one. */
function busyMessage(retryAfterSeconds: number): string {
  return `Too many passwords are being checked for you right now. Try again in ${busyText(retryAfterSeconds)}.`
}

/** Sign up, sign in, sign out and change password. */
export function accountRoutes(limits: SignInLimits) {
  return async (app: FastifyInstance): Promise<void> => {
    const db = app.deps.db
    const publicRoute = { config: { dashboardPublic: true } }

    app.get('/sign-in', publicRoute, async (request, reply) => {
      const next = safeNext(query(request, 'next'))
      if (request.dashboardSession !== null) return reply.redirect(next ?? '/dashboard', 303)
      return sendPage(
        reply,
        signInPage({
          csrf: csrfToken(reply),
          ...(next === undefined ? {} : { next }),
          notice: noticeFrom(request),
        }),
      )
    })

    app.post('/sign-in', { ...publicRoute, preHandler: app.csrfProtection }, async (request, reply) => {
      const email = normaliseEmail(field(request.body, 'email'))
      const password = field(request.body, 'password')
      const next = safeNext(field(request.body, 'next'))
      const again = (status: number, text: string, which?: string) =>
        sendPage(
          reply,
          signInPage({
            csrf: csrfToken(reply),
            email,
            ...(next === undefined ? {} : { next }),
            ...(which === undefined ? {} : { field: which }),
            notice: { kind: 'error', text },
          }),
          status,
        )
      if (!isEmail(email) || password === '')
        return again(400, 'Enter your email and password.', isEmail(email) ? 'password' : 'email')
      const outcome = await attemptSignIn(db, { email, password, ip: request.ip }, limits)
      if (outcome.kind === 'limited') {
        reply.header('retry-after', String(outcome.retryAfterSeconds))
        return again(
          429,
          `Too many failed sign-in attempts. For your security, try again in ${minutesText(outcome.retryAfterSeconds)}.`,
        )
      }
      if (outcome.kind === 'busy') {
        reply.header('retry-after', String(outcome.retryAfterSeconds))
        return again(429, busyMessage(outcome.retryAfterSeconds))
      }
      if (outcome.kind === 'invalid')
        return again(401, 'That email and password do not match an account.', 'password')
      await startSession(db, reply, outcome.accountId, userAgent(request))
      return reply.redirect(next ?? '/dashboard', 303)
    })

    app.get('/sign-up', publicRoute, async (request, reply) => {
      const next = safeNext(query(request, 'next'))
      if (request.dashboardSession !== null) return reply.redirect(next ?? '/dashboard', 303)
      return sendPage(reply, signUpPage({ csrf: csrfToken(reply), ...(next === undefined ? {} : { next }) }))
    })

    app.post('/sign-up', { ...publicRoute, preHandler: app.csrfProtection }, async (request, reply) => {
      const email = normaliseEmail(field(request.body, 'email'))
      const password = field(request.body, 'password')
      const next = safeNext(field(request.body, 'next'))
      const again = (status: number, text: string, which?: string) =>
        sendPage(
          reply,
          signUpPage({
            csrf: csrfToken(reply),
            email,
            ...(next === undefined ? {} : { next }),
            ...(which === undefined ? {} : { field: which }),
            notice: { kind: 'error', text },
          }),
          status,
        )
      if (!isEmail(email)) return again(400, 'Enter a valid email address, like you@example.com.', 'email')
      const strength = checkPasswordStrength(password, email)
      if (!strength.ok) return again(400, strength.reason, 'password')
      // Every attempt past the form checks counts, whether its email has an account or not.
      const reservation = await reserveSignUp(db, limits, { email, ip: request.ip })
      if (!reservation.allowed) {
        reply.header('retry-after', String(reservation.retryAfterSeconds))
        return again(
          429,
          `Too many sign-ups from your address. Try again in ${minutesText(reservation.retryAfterSeconds)}.`,
        )
      }
      // The password is hashed whether or not the email has an account, so both answers take
      // as long (and draw on the same password work).
      const passwordHash = await hashOrBusy(password, { address: request.ip })
      if (passwordHash instanceof PasswordWorkBusyError) {
        await attemptNotChecked(db, reservation.seq)
        reply.header('retry-after', String(passwordHash.retryAfterSeconds))
        return again(429, busyMessage(passwordHash.retryAfterSeconds))
      }
      const landing = next === undefined || next === '/dashboard' ? '/dashboard?notice=welcome' : next
      const accountId = await createAccountWithPassword(db, email, passwordHash)
      // An email that has an account gets the answer a new one gets, a session cookie included,
      // but its cookie opens no session: the page it lands on asks to sign in. Nothing in the
      // answer says the email is taken.
      if (accountId === undefined) {
        setUnusableSessionCookie(reply)
        return reply.redirect(landing, 303)
      }
      await attemptSucceeded(db, reservation.seq)
      await startSession(db, reply, accountId, userAgent(request))
      return reply.redirect(landing, 303)
    })

    app.post('/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
      await endSession(db, reply, sessionOf(request).idHash)
      return reply.redirect('/dashboard/sign-in?notice=signed_out', 303)
    })

    app.get('/account', async (request, reply) => {
      const session = sessionOf(request)
      const account = await findAccountById(db, session.liveAccountId)
      return sendPage(
        reply,
        accountPage({
          csrf: csrfToken(reply),
          email: session.email,
          createdAt: account?.created_at ?? '',
          notice: noticeFrom(request),
        }),
      )
    })

    app.post('/account/password', { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = sessionOf(request)
      const account = await findAccountById(db, session.liveAccountId)
      const current = field(request.body, 'current_password')
      const next = field(request.body, 'new_password')
      const again = (status: number, text: string, which: string) =>
        sendPage(
          reply,
          accountPage({
            csrf: csrfToken(reply),
            email: session.email,
            createdAt: account?.created_at ?? '',
            notice: { kind: 'error', text },
            field: which,
          }),
          status,
        )
      // The current password is a password guess like any other: the same limits apply, and it
      // is counted before it is checked.
      const party = { account: session.liveAccountId }
      const guess = await countedGuess(db, limits, { email: session.email, ip: request.ip }, () =>
        verifyPassword(current, account?.password_hash ?? null, party),
      )
      if (guess.kind === 'limited' || guess.kind === 'busy') {
        reply.header('retry-after', String(guess.retryAfterSeconds))
        const text =
          guess.kind === 'busy'
            ? busyMessage(guess.retryAfterSeconds)
            : `Too many wrong passwords. Try again in ${minutesText(guess.retryAfterSeconds)}.`
        return again(429, text, 'current_password')
      }
      if (guess.kind === 'wrong')
        return again(400, 'Your current password is not correct.', 'current_password')
      const strength = checkPasswordStrength(next, session.email)
      if (!strength.ok) return again(400, strength.reason, 'new_password')
      const passwordHash = await hashOrBusy(next, party)
      if (passwordHash instanceof PasswordWorkBusyError) {
        reply.header('retry-after', String(passwordHash.retryAfterSeconds))
        return again(429, busyMessage(passwordHash.retryAfterSeconds), 'new_password')
      }
      await setAccountPassword(db, session.liveAccountId, passwordHash)
      await endOtherSessions(db, session.liveAccountId, session.idHash)
      return reply.redirect('/dashboard/account?notice=password_changed', 303)
    })
  }
}
