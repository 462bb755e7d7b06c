import type { Command } from 'commander'
import { findAccountByEmail } from '../accounts/accounts-service.ts'
import type { Config } from '../config/config.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors/api-error.ts'
import { systemClock } from '../webhooks/clock.ts'
import { loadSecretBox } from '../webhooks/secrets-key.ts'
import { resolveWithDns } from '../webhooks/url-policy.ts'
import type { WebhookEndpointV1 } from '../webhooks/webhook-endpoint.ts'
import {
  createEndpoint,
  listEndpoints,
  updateEndpoint,
  type WebhooksContext,
} from '../webhooks/webhooks-service.ts'
import { type CliIo, UsageError } from './cli-io.ts'
import { requireEmail } from './emails.ts'

type WithDb = (work: (db: Db) => Promise<void>) => Promise<void>

async function accountId(db: Db, option: string | undefined): Promise<string> {
  const email = requireEmail(option, '--account')
  const account = await findAccountByEmail(db, email)
  if (account === undefined) throw new UsageError(`No account for ${email}.`)
  return account.id
}

/** The service's refusals (a URL refused, an unknown event type, no such endpoint) are usage errors here. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(error.detail)
    throw error
  }
}

function line(e: WebhookEndpointV1): string {
  const status = e.status === 'enabled' ? 'enabled' : `disabled (${e.disabled_reason ?? 'no reason given'})`
  return `${e.id}  ${e.url}  ${e.enabled_events.join(',')}  ${status}${e.description === null ? '' : `  ${e.description}`}`
}

/** `pet-service webhooks list|create|disable|enable`: an account's webhook endpoints. */
export function addWebhooksCommands(program: Command, io: CliIo, withDb: WithDb, config: () => Config): void {
  const context = async (db: Db): Promise<WebhooksContext> => ({
    box: await loadSecretBox(db, config().webhooks.secretsKey),
    insecure: config().webhooks.allowInsecure,
    resolve: resolveWithDns,
    clock: systemClock,
    endpointsPerAccount: config().webhooks.endpointsPerAccount,
  })
  const webhooks = program.command('webhooks').description('webhook endpoints of an account')

  webhooks
    .command('list')
    .description("list an account's webhook endpoints, newest first")
    .option('--account <email>', "the account's email (required)")
    .option('--json', 'print the result as JSON')
    .action((options: { account?: string; json?: boolean }) =>
      withDb(async (db) => {
        const id = await accountId(db, options.account)
        const all: WebhookEndpointV1[] = []
        for (let page = await listEndpoints(db, id, { limit: 100 }); ; ) {
          all.push(...page.data)
          const last = page.data.at(-1)
          if (!page.hasMore || last === undefined) break
          page = await listEndpoints(db, id, { limit: 100, startingAfter: last.id })
        }
        if (options.json) io.out(JSON.stringify(all))
        else if (all.length === 0) io.out(`No webhook endpoints for ${options.account}.`)
        else for (const e of all) io.out(line(e))
      }),
    )

  webhooks
    .command('create')
    .description('create a webhook endpoint; its signing secret is shown once')
    .option('--account <email>', "the account's email (required)")
    .option('--url <url>', 'where deliveries are POSTed (https; required)')
    .option('--events <types>', 'event types, space- or comma-separated: pet.created, pet.*, or *', '*')
    .option('--description <text>', 'a note for you')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  pet-service webhooks create --account me@example.com --url https://example.com/hooks\n  pet-service webhooks create --account me@example.com --url https://example.com/hooks --events "pet.* user.deleted" --json',
    )
    .action(
      (options: { account?: string; url?: string; events: string; description?: string; json?: boolean }) =>
        withDb(async (db) => {
          const id = await accountId(db, options.account)
          if (options.url === undefined) throw new UsageError('--url is required (https://…).')
          const events = options.events.split(/[\s,]+/).filter((e) => e !== '')
          const endpoint = await asUsage(async () =>
            createEndpoint(db, await context(db), id, {
              url: options.url!,
              enabled_events: events,
              ...(options.description === undefined ? {} : { description: options.description }),
            }),
          )
          if (options.json) io.out(JSON.stringify(endpoint))
          else {
            io.out(
              `Webhook endpoint ${endpoint.id} for ${options.account}: ${endpoint.url} (${endpoint.enabled_events.join(', ')}).\nIts signing secret, shown only this once:\n\n  ${endpoint.secret}\n\nVerify each delivery's webhook-signature with it (Standard Webhooks).`,
            )
          }
        }),
    )

  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'enabled'],
  ] as const) {
    webhooks
      .command(name)
      .description(
        status === 'disabled'
          ? 'stop sending events to an endpoint'
          : 'send events to an endpoint again (also one disabled for failing)',
      )
      .argument('<endpoint-id>', 'the endpoint id, we_… (see webhooks list)')
      .option('--account <email>', "the account's email (required)")
      .action((endpointId: string, options: { account?: string }) =>
        withDb(async (db) => {
          const id = await accountId(db, options.account)
          const endpoint = await asUsage(async () =>
            updateEndpoint(db, await context(db), id, endpointId, { status }),
          )
          io.out(`${endpoint.id} is ${endpoint.status}.`)
        }),
      )
  }
}
