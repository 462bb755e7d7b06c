/**
 * `petctl trigger EVENT_TYPE` (as `stripe trigger`): creates, changes or deletes the objects that
 * make the service record that event, then prints the event's id. The types are the client's
 * EVENT_TYPES, and the fixtures below must cover each one (the Record's type says so).
 */
import {
  EVENT_TYPES,
  type PetService,
  type RecordedEventType,
} from '../../../clients/typescript/src/index.ts'
import { leaf, type Register, type Run } from '../command.ts'
import { CommandFailure, UsageError } from '../errors.ts'

type Say = (line: string) => void

/** Makes the event happen; answers the id of the object it is about. */
type Fixture = (client: PetService, say: Say) => Promise<string | number>

const NAME = 'Triggered by petctl'

async function newPet(client: PetService, say: Say): Promise<number> {
  const pet = await client.pets.create({ name: NAME })
  say(`Created pet ${pet.id}.`)
  return pet.id
}

async function newUser(client: PetService, say: Say): Promise<string> {
  const user = await client.users.create({ name: NAME })
  say(`Created user ${user.id}.`)
  return user.id
}

async function newOrder(client: PetService, say: Say): Promise<number> {
  const order = await client.orders.create({ pet_id: await newPet(client, say) })
  say(`Created order ${order.id}.`)
  return order.id
}

const FIXTURES: Record<RecordedEventType, Fixture> = {
  'pet.created': newPet,
  'pet.updated': async (client, say) => {
    const id = await newPet(client, say)
    await client.pets.update(id, { status: 'pending' })
    say(`Updated pet ${id}: status pending.`)
    return id
  },
  'pet.deleted': async (client, say) => {
    const id = await newPet(client, say)
    await client.pets.delete(id)
    say(`Deleted pet ${id}.`)
    return id
  },
  'user.created': newUser,
  'user.updated': async (client, say) => {
    const id = await newUser(client, say)
    await client.users.update(id, { name: `${NAME}, updated` })
    say(`Updated user ${id}: name.`)
    return id
  },
  'user.deleted': async (client, say) => {
    const id = await newUser(client, say)
    await client.users.delete(id)
    say(`Deleted user ${id}.`)
    return id
  },
  'order.created': newOrder,
  'order.updated': async (client, say) => {
    const id = await newOrder(client, say)
    await client.orders.update(id, { status: 'approved' })
    say(`Updated order ${id}: status approved.`)
    return id
  },
  'order.deleted': async (client, say) => {
    const id = await newOrder(client, say)
    await client.orders.delete(id)
    say(`Deleted order ${id}.`)
    return id
  },
}

export const registerTrigger: Register = (program, io) => {
  leaf(program, io, 'trigger', {
    description: 'make an event happen, with objects made for it; print its id (--json: the event)',
    examples: [
      'petctl trigger pet.created',
      'petctl events resend $(petctl trigger order.updated) --webhook-endpoint we_...',
    ],
    action: trigger,
  }).argument('<event-type>', `one of ${EVENT_TYPES.join(', ')}`)
}

async function trigger(run: Run<object>, type: string): Promise<void> {
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    const test =
      type === 'webhook.test' ? ' (webhook.test goes to one endpoint: petctl webhooks test ID)' : ''
    throw new UsageError(`petctl trigger takes one of ${EVENT_TYPES.join(', ')}, not ${type}${test}.`)
  }
  const client = run.client('key')
  const objectId = await FIXTURES[type as RecordedEventType](client, run.io.err)
  // The event is written with the change, so it is there as soon as the change is answered.
  const [event] = (await client.events.list({ type, object_id: objectId, limit: 1 })).data
  if (event === undefined) throw new CommandFailure(`The service recorded no ${type} event for ${objectId}.`)
  run.io.out(run.json ? JSON.stringify(event, null, 2) : event.id)
}
