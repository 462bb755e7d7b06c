import { context, propagation, trace } from '@opentelemetry/api'
import { node, tracing } from '@opentelemetry/sdk-node'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/database.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

/**
 * A trace is a request (src/db/traced-dialect.ts): the database work of background jobs, which
 * no request started, is traced only for the share TRACES_BACKGROUND_RATIO asks, each
 * transaction whole.
 */
describeDb('database spans outside requests', () => {
  let database: TestDatabase
  const exporter = new tracing.InMemorySpanExporter()
  const provider = new node.NodeTracerProvider({
    spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
  })
  const tracer = provider.getTracer('test')
  const handles: DatabaseHandle[] = []

  beforeAll(async () => {
    // For the active span of a request to follow the work it starts.
    provider.register()
    database = await createTestDatabase()
  })
  afterAll(async () => {
    for (const handle of handles) await handle.close()
    await database.destroy()
    await provider.shutdown()
    trace.disable()
    context.disable()
    propagation.disable()
  })

  const traced = (backgroundTraceRatio: number) => {
    const handle = database.reopen({ tracer, backgroundTraceRatio })
    handles.push(handle)
    return handle.db
  }
  const work = async (db: DatabaseHandle['db']) => {
    await sql`select 1`.execute(db)
    await db.transaction().execute(async (trx) => {
      await sql`select 2`.execute(trx)
      await sql`select 3`.execute(trx)
    })
  }

  it('traces no statement or transaction outside a request by default, and all of them inside one', async () => {
    const db = traced(0)
    exporter.reset()
    await work(db)
    expect(exporter.getFinishedSpans()).toEqual([])
    await tracer.startActiveSpan('GET /v1/pet', async (request) => {
      await work(db)
      request.end()
    })
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => s.name).sort()).toEqual([
      'GET /v1/pet',
      'SELECT',
      'SELECT',
      'SELECT',
      'transaction',
    ])
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1)
  })

  it('traces each background statement and transaction as a trace of its own with TRACES_BACKGROUND_RATIO=1', async () => {
    const db = traced(1)
    exporter.reset()
    await work(db)
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => s.name).sort()).toEqual(['SELECT', 'SELECT', 'SELECT', 'transaction'])
    const transaction = spans.find((s) => s.name === 'transaction')!
    expect(spans.filter((s) => s.parentSpanContext === undefined)).toHaveLength(2)
    expect(
      spans.filter((s) => s.parentSpanContext?.spanId === transaction.spanContext().spanId),
    ).toHaveLength(2)
  })

  it('samples a share of background transactions, each whole: the transaction with all its statements, or nothing', async () => {
    const db = traced(0.5)
    exporter.reset()
    for (let i = 0; i < 40; i++) {
      await db.transaction().execute(async (trx) => {
        await sql`select 2`.execute(trx)
        await sql`select 3`.execute(trx)
      })
    }
    const spans = exporter.getFinishedSpans()
    const transactions = spans.filter((s) => s.name === 'transaction')
    expect(transactions.length).toBeGreaterThan(0)
    expect(transactions.length).toBeLessThan(40)
    expect(spans).toHaveLength(transactions.length * 3)
  })
})
