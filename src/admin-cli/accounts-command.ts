import type { Command } from 'commander'
import { findAccountByEmail, insertAccount, setAccountPassword } from '../accounts/accounts-service.ts'
import { checkPasswordStrength } from '../accounts/password-strength.ts'
import { hashPassword } from '../accounts/passwords.ts'
import { endOtherSessions } from '../dashboard/sessions.ts'
import type { Db } from '../db/schema.ts'
import { findSandboxOf, openSandbox, resetSandbox } from '../sandboxes/sandboxes-service.ts'
import { type CliIo, readPassword, UsageError } from './cli-io.ts'
import { requireEmail } from './emails.ts'

type WithDb = (work: (db: Db) => Promise<void>) => Promise<void>

/** `pet-service accounts create|set-password|sandbox|reset-sandbox`. */
export function addAccountsCommands(program: Command, io: CliIo, withDb: WithDb): void {
  const accounts = program
    .command('accounts')
    .description('accounts (the people who sign in to the dashboard)')
  accounts
    .command('create')
    .description('create an account (it has no password until set-password gives it one)')
    .option('--email <email>', "the account's email (required)")
    .option('--json', 'print the result as JSON')
    .action((options: { email?: string; json?: boolean }) =>
      withDb(async (db) => {
        const email = requireEmail(options.email, '--email')
        if ((await findAccountByEmail(db, email)) !== undefined)
          throw new UsageError(`An account for ${email} already exists.`)
        const account = await insertAccount(db, { email })
        io.out(
          options.json
            ? JSON.stringify({ account_id: account.id, email: account.email })
            : `Created account ${account.id} for ${account.email}. To sign in to the dashboard, give it a password: pet-service accounts set-password --email ${account.email}`,
        )
      }),
    )

  accounts
    .command('sandbox')
    .description("the account's sandbox (a separate account for test data), created if there is none")
    .option('--email <email>', "the live account's email (required)")
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExample:\n  pet-service accounts sandbox --email me@example.com --json')
    .action((options: { email?: string; json?: boolean }) =>
      withDb(async (db) => {
        const email = requireEmail(options.email, '--email')
        const live = await findAccountByEmail(db, email)
        if (live === undefined) throw new UsageError(`No account for ${email}.`)
        if (live.live_account_id !== null)
          throw new UsageError(`${email} names a sandbox, not a live account.`)
        const { sandbox, created } = await openSandbox(db, live.id)
        io.out(
          options.json
            ? JSON.stringify({ account_id: sandbox.id, live_account_id: live.id, mode: 'sandbox', created })
            : `${created ? 'Created' : 'The'} sandbox ${sandbox.id} of ${live.email}. Its keys: pet-service keys create --account ${live.email} --sandbox`,
        )
      }),
    )

  accounts
    .command('reset-sandbox')
    .description("delete all of the account's sandbox data; its keys, OAuth apps and webhook endpoints stay")
    .option('--email <email>', "the live account's email (required)")
    .option('--yes', 'confirm: the data cannot be brought back')
    .addHelpText('after', '\nExample:\n  pet-service accounts reset-sandbox --email me@example.com --yes')
    .action((options: { email?: string; yes?: boolean }) =>
      withDb(async (db) => {
        const email = requireEmail(options.email, '--email')
        const live = await findAccountByEmail(db, email)
        if (live === undefined) throw new UsageError(`No account for ${email}.`)
        const sandbox = await findSandboxOf(db, live.id)
        if (sandbox === undefined) throw new UsageError(`${email} has no sandbox.`)
        if (options.yes !== true)
          throw new UsageError(
            `This deletes every pet, user, order, event and webhook delivery of sandbox ${sandbox.id}; add --yes to go ahead.`,
          )
        await resetSandbox(db, sandbox.id)
        io.out(
          `Reset sandbox ${sandbox.id} of ${live.email}: its data is deleted; its keys, OAuth apps and webhook endpoints stay.`,
        )
      }),
    )

  accounts
    .command('set-password')
    .description(
      "set an account's dashboard password: typed on a terminal, else the first line of standard input; signs out its sessions",
    )
    .option('--email <email>', "the account's email (required)")
    .addHelpText(
      'after',
      '\nExamples:\n  pet-service accounts set-password --email me@example.com\n  pet-service accounts set-password --email me@example.com < password.txt',
    )
    .action((options: { email?: string }) =>
      withDb(async (db) => {
        const email = requireEmail(options.email, '--email')
        const account = await findAccountByEmail(db, email)
        if (account === undefined)
          throw new UsageError(`No account for ${email} (pet-service accounts create --email ${email}).`)
        const password = await readPassword(io, `New dashboard password for ${account.email}: `)
        // The rules of the dashboard's sign-up and password change (src/accounts/password-strength.ts).
        const verdict = checkPasswordStrength(password, account.email)
        if (!verdict.ok) throw new UsageError(`${verdict.reason} Nothing changed.`)
        await setAccountPassword(db, account.id, await hashPassword(password, { account: account.id }))
        await endOtherSessions(db, account.id, '')
        io.out(`Set the dashboard password of ${account.email}; its dashboard sessions are signed out.`)
      }),
    )
}
