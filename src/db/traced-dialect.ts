import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'

export interface TracingOptions {
  tracer: Tracer
  /** `db.system.name` of the OpenTelemetry database conventions. */
  system: 'sqlite' | 'postgresql'
  /** The share of the work no request started (background jobs') that is traced, 0 to 1. */
  backgroundRatio: number
}

/** A transaction of background work left out of the traces. */
const UNTRACED = 'untraced'

/**
 * Any Kysely dialect, with an OpenTelemetry span for every query and every transaction
 * (https://opentelemetry.io/docs/specs/semconv/database/database-spans/). A query's span is a
 * child of its transaction's, or of whatever span is active (the request's). Spans carry the
 * statement with its placeholders — Kysely always sends values as parameters — and never the
 * values. Only used when tracing is on: without it the database runs unwrapped.
 *
 * A trace is a request: work with no span around it is a background job's (the event poller, the
 * webhooks worker, the purges, every few hundred milliseconds), traced only for the share
 * `backgroundRatio` of its statements and transactions, each sampled whole, as a trace of its own.
 */
export class TracedDialect implements Dialect {
  readonly #inner: Dialect
  readonly #options: TracingOptions

  constructor(inner: Dialect, options: TracingOptions) {
    this.#inner = inner
    this.#options = options
  }

  createDriver(): Driver {
    return new TracedDriver(this.#inner.createDriver(), this.#options)
  }

  createQueryCompiler(): QueryCompiler {
    return this.#inner.createQueryCompiler()
  }

  createAdapter(): DialectAdapter {
    return this.#inner.createAdapter()
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own Dialect signature.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.#inner.createIntrospector(db)
  }
}

class TracedDriver implements Driver {
  readonly #inner: Driver
  readonly #options: TracingOptions

  constructor(inner: Driver, options: TracingOptions) {
    this.#inner = inner
    this.#options = options
  }

  init(): Promise<void> {
    return this.#inner.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TracedConnection(await this.#inner.acquireConnection(), this.#options)
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const traced = connection as TracedConnection
    if (!traces(this.#options)) {
      await this.#inner.beginTransaction(traced.inner, settings)
      traced.transaction = UNTRACED
      return
    }
    const span = this.#options.tracer.startSpan('transaction', {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': this.#options.system },
    })
    try {
      await this.#inner.beginTransaction(traced.inner, settings)
    } catch (error) {
      endWithError(span, error)
      throw error
    }
    traced.transaction = span
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const traced = connection as TracedConnection
    const span = traced.transaction === UNTRACED ? undefined : traced.transaction
    traced.transaction = undefined
    try {
      await this.#inner.commitTransaction(traced.inner)
    } catch (error) {
      if (span !== undefined) endWithError(span, error)
      throw error
    }
    span?.end()
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const traced = connection as TracedConnection
    const span = traced.transaction === UNTRACED ? undefined : traced.transaction
    traced.transaction = undefined
    span?.setAttribute('db.transaction.rolled_back', true)
    try {
      await this.#inner.rollbackTransaction(traced.inner)
    } finally {
      span?.end()
    }
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection((connection as TracedConnection).inner)
  }

  destroy(): Promise<void> {
    return this.#inner.destroy()
  }
}

class TracedConnection implements DatabaseConnection {
  /** The span of the transaction running on this connection, if one is and it is traced. */
  transaction: Span | typeof UNTRACED | undefined

  constructor(
    readonly inner: DatabaseConnection,
    readonly options: TracingOptions,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.transaction === UNTRACED || (this.transaction === undefined && !traces(this.options))) {
      return this.inner.executeQuery<R>(query)
    }
    const { operation, collection } = describeStatement(query.sql)
    const attributes: Attributes = {
      'db.system.name': this.options.system,
      'db.operation.name': operation,
      'db.query.text': query.sql,
    }
    if (collection !== undefined) attributes['db.collection.name'] = collection
    const parent =
      this.transaction === undefined ? context.active() : trace.setSpan(context.active(), this.transaction)
    const span = this.options.tracer.startSpan(
      collection === undefined ? operation : `${operation} ${collection}`,
      { kind: SpanKind.CLIENT, attributes },
      parent,
    )
    try {
      const result = await this.inner.executeQuery<R>(query)
      span.end()
      return result
    } catch (error) {
      endWithError(span, error)
      throw error
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize)
  }
}

/**
 * The statement's first keyword and the table it names first, for the span's name. A WITH that
 * writes is named by its first write (PostgreSQL's one-statement pet create, insertPetWithEvent,
 * is "INSERT pets" as the plain insert it stands for), so dashboards keyed on span names keep
 * counting it.
 */
function describeStatement(sql: string): { operation: string; collection?: string } {
  let operation = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY'
  if (operation === 'WITH')
    operation = /\b(insert|update|delete)\b/i.exec(sql)?.[1]?.toUpperCase() ?? operation
  const collection = /\b(?:from|into|update)\s+(?:"[^"]+"\.)?"([^"]+)"/i.exec(sql)?.[1]
  return collection === undefined ? { operation } : { operation, collection }
}

/** Whether work starting now gets spans: always within a request's span, else by the background share. */
function traces(options: TracingOptions): boolean {
  if (trace.getSpan(context.active()) !== undefined) return true
  return options.backgroundRatio > 0 && Math.random() < options.backgroundRatio
}

/**
 * The error's code (`23505`, `SQLITE_CONSTRAINT_UNIQUE`) goes on the span, never its message:
 * a database's message or detail may quote the values.
 */
function endWithError(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code
  const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'error'
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
}
