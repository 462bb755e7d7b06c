/** `petctl webhooks`: the endpoints the service POSTs your events to, signed (v1, API key). */
import type {
  WebhookDeliveryStatus,
  WebhookEndpointStatus,
  WebhookEndpointUpdateParams,
} from '../../../clients/typescript/src/index.ts'
import { group, leaf, type Register, type Run } from '../command.ts'
import { UsageError } from '../errors.ts'
import { printList, show, showDeleted, showQueued } from '../output.ts'
import { commaList, eventId, integer, oneOf, webhookEndpointId } from '../parse.ts'

interface EndpointFlags {
  /** Not `--url`: that is the service's (a global option). */
  endpointUrl?: string
  events?: string
  description?: string
  status?: string
}

interface PageFlags {
  limit?: string
  startingAfter?: string
  all?: boolean
}

interface DeliveryFlags extends PageFlags {
  eventId?: string
  status?: string
}

const ENDPOINT_STATUSES: readonly WebhookEndpointStatus[] = ['enabled', 'disabled']
const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'succeeded', 'failed', 'retrying']
const COLUMNS = ['id', 'url', 'enabled_events', 'status', 'description', 'created_at']
const DELIVERY_COLUMNS = [
  'id',
  'event_type',
  'event_id',
  'attempt',
  'status',
  'response_status',
  'latency_ms',
  'attempted_at',
]
const EVENTS_HELP = 'comma-separated types or wildcards, e.g. pet.*,user.deleted, or * for all'

export const registerWebhooks: Register = (program, io) => {
  const webhooks = group(program, 'webhooks', 'webhook endpoints and their deliveries (v1, API key)', [
    'petctl webhooks create --endpoint-url https://example.com/webhooks --events pet.*',
  ])
  leaf(webhooks, io, 'list', {
    description: 'list webhook endpoints, newest first (GET /v1/webhook_endpoint)',
    examples: ['petctl webhooks list', 'petctl webhooks list --all --json'],
    action: list,
  })
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--all', 'every page (a progress count on a terminal)')
  leaf(webhooks, io, 'create', {
    description: 'create an endpoint; prints its signing secret, this once (POST /v1/webhook_endpoint)',
    examples: [
      "petctl webhooks create --endpoint-url https://example.com/webhooks --events 'pet.*,user.deleted'",
    ],
    action: create,
  })
    .option(
      '--endpoint-url <url>',
      'required: where to POST the events (https, not a private address, unless the service allows it)',
    )
    .option('--events <types>', `required: ${EVENTS_HELP}`)
    .option('--description <text>')
    .option('--idempotency-key <key>', 'one is generated otherwise')
  leaf(webhooks, io, 'get', {
    description: 'show an endpoint (GET /v1/webhook_endpoint/ID)',
    examples: ['petctl webhooks get we_... --json'],
    action: get,
  }).argument('<id>', 'the endpoint id (we_…)')
  leaf(webhooks, io, 'update', {
    description: 'change some fields of an endpoint (PATCH /v1/webhook_endpoint/ID)',
    examples: [
      "petctl webhooks update we_... --events '*' --description ''",
      'petctl webhooks update we_... --status disabled',
    ],
    action: update,
  })
    .argument('<id>', 'the endpoint id (we_…)')
    .option('--endpoint-url <url>', 'where to POST the events')
    .option('--events <types>', EVENTS_HELP)
    .option('--description <text>', '"" clears it')
    .option('--status <status>', 'enabled, or disabled to pause deliveries')
  leaf(webhooks, io, 'delete', {
    description: 'delete an endpoint: no more deliveries to it (DELETE /v1/webhook_endpoint/ID)',
    examples: ['petctl webhooks delete we_...'],
    action: remove,
  }).argument('<id>', 'the endpoint id (we_…)')
  leaf(webhooks, io, 'rotate-secret', {
    description: 'a new signing secret, printed this once; the current one keeps signing for a while',
    examples: ['petctl webhooks rotate-secret we_... --expire-current-in-hours 1'],
    action: rotateSecret,
  })
    .argument('<id>', 'the endpoint id (we_…)')
    .option('--expire-current-in-hours <n>', 'how long the current secret also signs, 0-168 (default 24)')
  leaf(webhooks, io, 'deliveries', {
    description:
      'the delivery log of an endpoint, newest attempt first (GET /v1/webhook_endpoint/ID/delivery)',
    examples: [
      'petctl webhooks deliveries we_... --status failed',
      'petctl webhooks deliveries we_... --event-id evt_...',
    ],
    action: deliveries,
  })
    .argument('<id>', 'the endpoint id (we_…)')
    .option('--event-id <id>', 'only the attempts of this event')
    .option('--status <status>', DELIVERY_STATUSES.join(', '))
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--all', 'every page (a progress count on a terminal)')
  leaf(webhooks, io, 'test', {
    description: 'send a webhook.test event to this endpoint only (POST /v1/webhook_endpoint/ID/test)',
    examples: ['petctl webhooks test we_...'],
    action: sendTest,
  }).argument('<id>', 'the endpoint id (we_…)')
}

/** The endpoint fields among the flags given, as the API takes them (checked before any request). */
function endpointFields(flags: EndpointFlags): WebhookEndpointUpdateParams {
  const out: WebhookEndpointUpdateParams = {}
  if (flags.endpointUrl !== undefined) out.url = flags.endpointUrl
  if (flags.events !== undefined) {
    out.enabled_events = commaList(flags.events)
    if (out.enabled_events.length === 0)
      throw new UsageError("--events needs at least one type, wildcard (pet.*) or '*'.")
  }
  if (flags.description !== undefined) out.description = flags.description === '' ? null : flags.description
  if (flags.status !== undefined) out.status = oneOf(flags.status, ENDPOINT_STATUSES, '--status')
  return out
}

const page = (flags: PageFlags) => ({
  ...(flags.all === true ? { limit: 100 } : {}),
  ...(flags.limit === undefined ? {} : { limit: integer(flags.limit, '--limit', 1) }),
})

async function list(run: Run<PageFlags>): Promise<void> {
  const { flags } = run
  const params = {
    ...page(flags),
    ...(flags.startingAfter === undefined ? {} : { starting_after: webhookEndpointId(flags.startingAfter) }),
  }
  const pages = run.client('key').webhookEndpoints.list(params, run.options)
  await printList(pages, flags.all === true, 'webhook endpoints', COLUMNS, run)
}

async function create(run: Run<Omit<EndpointFlags, 'status'>>): Promise<void> {
  const { url, enabled_events, description } = endpointFields(run.flags)
  if (url === undefined || enabled_events === undefined)
    throw new UsageError("petctl webhooks create needs --endpoint-url URL and --events TYPES (e.g. 'pet.*').")
  const endpoint = await run
    .client('key')
    .webhookEndpoints.create(
      { url, enabled_events, ...(description === undefined ? {} : { description }) },
      run.options,
    )
  show(run, endpoint)
  if (!run.json) run.io.err('Store the secret now: it is not shown again (rotate-secret makes a new one).')
}

async function get(run: Run<object>, id: string): Promise<void> {
  show(run, await run.client('key').webhookEndpoints.get(webhookEndpointId(id), run.options))
}

async function update(run: Run<EndpointFlags>, id: string): Promise<void> {
  const endpoint = webhookEndpointId(id)
  const changes = endpointFields(run.flags)
  if (Object.keys(changes).length === 0)
    throw new UsageError('Nothing to change: give --endpoint-url, --events, --description or --status.')
  show(run, await run.client('key').webhookEndpoints.update(endpoint, changes, run.options))
}

async function remove(run: Run<object>, id: string): Promise<void> {
  const deleted = await run.client('key').webhookEndpoints.delete(webhookEndpointId(id), run.options)
  showDeleted(run, 'webhook endpoint', deleted)
}

async function rotateSecret(run: Run<{ expireCurrentInHours?: string }>, id: string): Promise<void> {
  const endpoint = webhookEndpointId(id)
  const hours = run.flags.expireCurrentInHours
  const params =
    hours === undefined ? {} : { expire_current_in_hours: integer(hours, '--expire-current-in-hours', 0) }
  show(run, await run.client('key').webhookEndpoints.rotateSecret(endpoint, params, run.options))
}

async function deliveries(run: Run<DeliveryFlags>, id: string): Promise<void> {
  const { flags } = run
  const endpoint = webhookEndpointId(id)
  const params = {
    ...page(flags),
    ...(flags.startingAfter === undefined ? {} : { starting_after: flags.startingAfter }),
    ...(flags.eventId === undefined ? {} : { event_id: eventId(flags.eventId) }),
    ...(flags.status === undefined ? {} : { status: oneOf(flags.status, DELIVERY_STATUSES, '--status') }),
  }
  const pages = run.client('key').webhookEndpoints.listDeliveries(endpoint, params, run.options)
  await printList(pages, flags.all === true, 'deliveries', DELIVERY_COLUMNS, run)
}

async function sendTest(run: Run<object>, id: string): Promise<void> {
  showQueued(run, await run.client('key').webhookEndpoints.sendTest(webhookEndpointId(id), run.options))
}
