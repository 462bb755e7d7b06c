import type { PassThrough } from 'node:stream'
import type { KyselyPlugin } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import type { Db } from '../../src/db/schema.ts'
import { EventPoller } from '../../src/events/event-poller.ts'
import { EventStreams } from '../../src/events/event-streams.ts'
import { useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { eventCommitted, eventLeftOpen } from '../helpers/late-commit.ts'
import { waitUntil } from '../helpers/poll.ts'

/** The database as the poller sees it, counting its queries: a test knows when it has looked again. */
function counted(db: Db): { db: Db; queries: () => number } {
  let queries = 0
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      queries++
      return args.result
    },
  }
  return { db: db.withPlugin(plugin), queries: () => queries }
}

/** The ids and pet names a stream sends, as they come. */
function messagesOf(stream: PassThrough): { id: string; name: string }[] {
  const messages: { id: string; name: string }[] = []
  let buffer = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    buffer += chunk
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const id = /^id: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (id !== undefined && data !== undefined)
        messages.push({ id, name: JSON.parse(data).data.object.name })
    }
  })
  return messages
}

// On PostgreSQL an event's seq is taken at its insert, not at its commit: a transaction that
// commits after a later one makes its event appear below events already visible (and sent).
describeDb('event streams while an event commits after a later one (PostgreSQL)', () => {
  let poller: EventPoller
  let streams: EventStreams
  let reads: ReturnType<typeof counted>

  const t = useTestApp()
  afterEach(async () => {
    streams.closeAll()
    await poller.close()
  })

  function start() {
    reads = counted(t.database.db)
    poller = new EventPoller(reads.db, {
      intervalMs: 20,
      batch: 100,
      onError: (error) => {
        throw error
      },
    })
    streams = new EventStreams(t.database.db, poller, {
      perAccount: 5,
      heartbeatMs: 60_000,
      maxBufferedBytes: 1024 * 1024,
      replayBatch: 100,
    })
  }

  /** Until the poller has read the table again twice: whatever it would send by now, it has sent. */
  async function twoLooksLater() {
    const seen = reads.queries()
    await waitUntil('the poller has looked twice more', async () => reads.queries() >= seen + 8)
  }

  it('resumes after Last-Event-ID without missing an event whose transaction committed after a later one', async () => {
    start()
    const { accountId } = await t.newAccount()
    const first = await streams.openStream(accountId, {}, undefined)
    const before = messagesOf(first)
    await eventCommitted(t.database.db, accountId, 'A')
    await waitUntil('A is streamed', async () => before.length === 1)

    const late = await eventLeftOpen(t.database.db, accountId, 'late')
    const b = await eventCommitted(t.database.db, accountId, 'B')
    await twoLooksLater()
    // The client goes away while the late transaction is still open, and comes back after it
    // committed, resuming after the last event it was sent.
    first.destroy()
    await late.commit()
    const lastEventId = before.at(-1)!.id
    const after = messagesOf(await streams.openStream(accountId, {}, lastEventId))
    const received = () => new Set([...before, ...after].map((m) => m.id))
    await waitUntil(
      'both events are received',
      async () => received().has(late.id) && received().has(b),
      5_000,
    )
    // In the order the events were numbered, each once.
    expect([...before, ...after].map((m) => m.name)).toEqual(['A', 'late', 'B'])
  })

  it('sends an event committed after a later one before that later one', async () => {
    start()
    const { accountId } = await t.newAccount()
    const messages = messagesOf(await streams.openStream(accountId, {}, undefined))
    const late = await eventLeftOpen(t.database.db, accountId, 'late')
    await eventCommitted(t.database.db, accountId, 'B')
    await twoLooksLater()
    await late.commit()
    await waitUntil('both events are streamed', async () => messages.length === 2)
    expect(messages.map((m) => m.name)).toEqual(['late', 'B'])
  })

  it('is not held back by a number whose transaction rolled back', async () => {
    start()
    const { accountId } = await t.newAccount()
    const messages = messagesOf(await streams.openStream(accountId, {}, undefined))
    const rolledBack = await eventLeftOpen(t.database.db, accountId, 'never')
    await eventCommitted(t.database.db, accountId, 'B')
    await rolledBack.rollback()
    await eventCommitted(t.database.db, accountId, 'C')
    await waitUntil('B and C are streamed', async () => messages.length === 2)
    expect(messages.map((m) => m.name)).toEqual(['B', 'C'])
  })
})
