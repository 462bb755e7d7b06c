/** `petctl events`: what changed in your account, kept 30 days (v1, API key); `resend` to an endpoint. */
import type { Event, EventListParams } from '../../../clients/typescript/src/index.ts'
import { group, leaf, type Register, type Run } from '../command.ts'
import type { Row } from '../format.ts'
import { printList, show, showQueued } from '../output.ts'
import { commaList, eventId, integer, webhookEndpointId } from '../parse.ts'

interface ListFlags {
  type?: string
  objectId?: string
  createdGte?: string
  createdLte?: string
  limit?: string
  startingAfter?: string
  all?: boolean
}

const COLUMNS = ['id', 'type', 'object_id', 'created_at']

/** An event as a table row: what it is about, by id. */
const row = (event: Event): Row => ({ ...event, object_id: (event.data.object as Row).id })

export const registerEvents: Register = (program, io) => {
  const events = group(program, 'events', 'events: what changed in your account (v1, API key)', [
    'petctl events list --type pet.* --limit 20',
  ])
  leaf(events, io, 'list', {
    description: 'list events, newest first (GET /v1/event)',
    examples: [
      'petctl events list --type pet.*,user.deleted',
      'petctl events list --object-id 1 --all --json',
    ],
    action: list,
  })
    .option('--type <types>', 'comma-separated types or wildcards, e.g. pet.*,user.deleted')
    .option('--object-id <id>', 'only the events of this pet, user (usr_…) or order')
    .option('--created-gte <time>', 'created at or after: ISO 8601 or Unix seconds')
    .option('--created-lte <time>', 'created at or before: ISO 8601 or Unix seconds')
    .option('--limit <n>', 'page size, 1-100 (default 10)')
    .option('--starting-after <id>', 'the last id of the previous page')
    .option('--all', 'every page (a progress count on a terminal)')
  leaf(events, io, 'get', {
    description: 'show an event, with the object as it was then (GET /v1/event/ID)',
    examples: ['petctl events get evt_... --json'],
    action: get,
  }).argument('<id>', 'the event id (evt_…)')
  leaf(events, io, 'resend', {
    description: 'deliver an event again to one webhook endpoint (POST /v1/webhook_endpoint/ID/resend)',
    examples: ['petctl events resend evt_... --webhook-endpoint we_...'],
    action: resend,
  })
    .argument('<id>', 'the event id (evt_…)')
    .requiredOption('--webhook-endpoint <id>', 'the endpoint to send it to (we_…), whatever its events')
}

async function list(run: Run<ListFlags>): Promise<void> {
  const { flags } = run
  const params: EventListParams = {
    ...(flags.type === undefined ? {} : { type: commaList(flags.type) }),
    ...(flags.objectId === undefined ? {} : { object_id: flags.objectId }),
    ...(flags.createdGte === undefined ? {} : { 'created[gte]': flags.createdGte }),
    ...(flags.createdLte === undefined ? {} : { 'created[lte]': flags.createdLte }),
    ...(flags.limit === undefined ? {} : { limit: integer(flags.limit, '--limit', 1) }),
    ...(flags.startingAfter === undefined ? {} : { starting_after: eventId(flags.startingAfter) }),
  }
  const pages = run
    .client('key')
    .events.list({ ...(flags.all === true ? { limit: 100 } : {}), ...params }, run.options)
  await printList(pages, flags.all === true, 'events', COLUMNS, run, row)
}

async function get(run: Run<object>, id: string): Promise<void> {
  show(run, await run.client('key').events.get(eventId(id), run.options))
}

async function resend(run: Run<{ webhookEndpoint: string }>, id: string): Promise<void> {
  const event = eventId(id)
  const endpoint = webhookEndpointId(run.flags.webhookEndpoint)
  showQueued(run, await run.client('key').webhookEndpoints.resend(endpoint, { event_id: event }, run.options))
}
