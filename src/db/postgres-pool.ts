import type { PostgresPool, PostgresPoolClient } from 'kysely'
import pg from 'pg'
import type { DbPooler } from '../config/config.ts'
import { DatabaseUnavailableError, databaseFailure, isServerReported } from './database-errors.ts'
import { isMisplacedPreparedStatement, isStalePreparedStatement, statementName } from './named-statements.ts'
import { connectFailure } from './postgres-connect-failure.ts'

export interface PostgresPoolOptions {
  poolSize: number
  /** Waiting for a pooled connection, opening one included. */
  connectTimeoutMs: number
  /** A statement's run time, and a transaction's idle time, on the server; 0 for no limit (migrations). */
  statementTimeoutMs: number
  /** Waiting for a row or table lock another session holds. */
  lockTimeoutMs: number
  /** A connection pooler between the service and PostgreSQL, by its pool mode (DB_POOLER). */
  pooler: DbPooler
  /**
   * The queries prepared once go as named statements (DB_PREPARED_STATEMENTS) while `named` is
   * true; it turns false for good, with one warning, once a pooler is seen to lose one. The pools
   * of one database handle share it: they reach the same pooler.
   */
  preparedStatements: { named: boolean }
  /** A connection failed outside any query (the server went away, say). */
  onConnectionError: (error: Error) => void
  /** Something the operator should change; said once. */
  onWarning: (message: string) => void
}

/**
 * node-postgres's pool with every wait bounded, for Kysely. It also keeps a failing server from
 * taking the process down or leaving dead connections in the pool:
 *  - an `error` listener on each connection, also while it is checked out: a connection the
 *    server terminates between two queries of a request (`pg_terminate_backend`, a restart, a
 *    failover) otherwise emits an unhandled `error` event, and the process exits;
 *  - a connection whose query failed without the server saying why (a read timeout, a broken
 *    socket) goes back to the pool as broken, so the pool closes it instead of reusing it;
 *  - failing to get a connection is a DatabaseUnavailableError (503), whatever pg called it.
 *
 * The bounds on the server's side (statement_timeout, idle_in_transaction_session_timeout,
 * lock_timeout) go as startup parameters, which a pooler such as PgBouncer refuses; behind one
 * (`pooler`) they are set once per connection in session mode, and in transaction mode, where
 * consecutive transactions may run on different server connections, at the start of every
 * transaction (`set local`, sent with the `begin`): a statement outside a transaction then runs
 * under the role's settings (docs/operations.md, "Running behind PgBouncer").
 */
export interface BoundedPostgresPool extends PostgresPool {
  /** The node-postgres pool underneath, for its connection and queue counts (metrics). */
  readonly pg: pg.Pool
}

export function createPostgresPool(databaseUrl: string, options: PostgresPoolOptions): BoundedPostgresPool {
  const limited = options.statementTimeoutMs !== 0
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    ...(options.pooler !== 'none'
      ? {}
      : {
          lock_timeout: options.lockTimeoutMs,
          ...(limited
            ? {
                statement_timeout: options.statementTimeoutMs,
                idle_in_transaction_session_timeout: options.statementTimeoutMs,
              }
            : {}),
        }),
    // Client side, for a server that stops answering altogether; a second more than the
    // server's own limit, so a slow statement gets the server's clearer error and keeps
    // its connection.
    ...(limited ? { query_timeout: options.statementTimeoutMs + 1000 } : {}),
    keepAlive: true,
    // Names the service's sessions in pg_stat_activity (a connection string may name them
    // otherwise); PgBouncer passes it on.
    application_name: 'pet-service',
  })
  // An idle connection that loses its server: the pool drops it and opens another when needed.
  pool.on('error', (error) => options.onConnectionError(error))
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onConnectionError(error))
  })

  const statements = options.preparedStatements
  const session = {
    get named() {
      return statements.named
    },
    begin: options.pooler === 'transaction' ? `; ${timeoutSettings(options, 'set local')}` : '',
    misplaced(error: unknown): void {
      if (!statements.named) return
      statements.named = false
      options.onWarning(
        `PostgreSQL ran a prepared statement on another connection than the one that prepared it (${String(error)}): a connection pooler in transaction mode, such as PgBouncer before 1.21, does not keep them. The service now sends its queries unnamed; set DB_PREPARED_STATEMENTS=false (DB_POOLER=transaction does) to start that way.`,
      )
    },
  }
  const wrappers = new WeakMap<pg.PoolClient, CheckedOutClient>()
  return {
    pg: pool,
    async connect() {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        throw new DatabaseUnavailableError(connectFailure(error, databaseUrl), { cause: error })
      }
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        if (options.pooler === 'session') {
          // Kept until the pooler hands the server connection to another client, resetting it
          // (PgBouncer's server_reset_query, DISCARD ALL).
          try {
            await client.query(timeoutSettings(options, 'set'))
          } catch (error) {
            client.release(error instanceof Error ? error : new Error(String(error)))
            throw new DatabaseUnavailableError(connectFailure(error, databaseUrl), { cause: error })
          }
        }
        wrapper = new CheckedOutClient(client, session)
        wrappers.set(client, wrapper)
      }
      wrapper.broken = undefined
      return wrapper
    },
    end: () => pool.end(),
  }
}

/** The server-side bounds as `set` statements; 0 (no limit) is set too, over the role's own settings. */
function timeoutSettings(options: PostgresPoolOptions, set: 'set' | 'set local'): string {
  const statement = Math.trunc(options.statementTimeoutMs)
  return [
    `${set} statement_timeout = ${statement}`,
    `${set} idle_in_transaction_session_timeout = ${statement}`,
    `${set} lock_timeout = ${Math.trunc(options.lockTimeoutMs)}`,
  ].join('; ')
}

/** What the pool's connections share about their sessions. */
interface SessionRules {
  /** Whether the queries prepared once go named; turned off once a pooler is seen to lose them. */
  readonly named: boolean
  /** Appended to a transaction's `begin`: its bounds, behind a transaction pooler. */
  readonly begin: string
  misplaced(error: unknown): void
}

/** One pooled connection as Kysely sees it; the same object each time the connection is checked out. */
class CheckedOutClient implements PostgresPoolClient {
  broken: Error | undefined
  readonly #client: pg.PoolClient
  readonly #session: SessionRules
  /** Between Kysely's `begin` (or `start transaction …`) and its `commit` or `rollback`. */
  #inTransaction = false

  constructor(client: pg.PoolClient, session: SessionRules) {
    this.#client = client
    this.#session = session
  }

  // Kysely calls query(sql, parameters) and, for streaming, query(cursor); both go through as
  // given, except that the SQL of a query prepared once goes as a named statement, and a
  // transaction's `begin` carries its bounds behind a transaction pooler.
  query(...args: unknown[]): never {
    const [text, values] = args
    const name = typeof text === 'string' && this.#session.named ? statementName(text) : undefined
    const begins = name === undefined && typeof text === 'string' && this.#noteTransaction(text)
    const query = this.#client.query as (...a: unknown[]) => unknown
    const result =
      name !== undefined
        ? query.call(this.#client, { name, text, values })
        : begins && this.#session.begin !== ''
          ? this.#begin(query, `${text}${this.#session.begin}`)
          : query.apply(this.#client, args)
    if (!(result instanceof Promise)) return result as never
    return result.catch((error: unknown) => {
      if (name !== undefined && isMisplacedPreparedStatement(error)) {
        // A pooler ran it on another server connection. Outside a transaction it did nothing and
        // runs again, unnamed; inside one the transaction is lost: 503, retry shortly. Either
        // way no statement goes named from now on.
        this.#session.misplaced(error)
        if (!this.#inTransaction) return query.apply(this.#client, args)
        throw new DatabaseUnavailableError('a connection pooler lost a prepared statement', { cause: error })
      }
      if (isStalePreparedStatement(error)) {
        // The connection's statements were planned for the tables as they were before a
        // migration: the pool drops it, and a fresh one prepares them again. Outside a
        // transaction the statement did nothing and runs again, unnamed, on this connection;
        // inside one the transaction is lost, and the request answers 503 (retry shortly).
        this.broken = error as Error
        if (!this.#inTransaction) return query.apply(this.#client, args)
        throw new DatabaseUnavailableError('a migration changed a table under a prepared statement', {
          cause: error,
        })
      }
      if (databaseFailure(error) === 'unavailable' && !isServerReported(error)) {
        this.broken = error instanceof Error ? error : new Error(String(error))
      }
      throw error
    }) as never
  }

  /** Follows Kysely's transaction statements; true for the one that begins a transaction. */
  #noteTransaction(text: string): boolean {
    if (text === 'begin' || text.startsWith('start transaction')) {
      this.#inTransaction = true
      return true
    }
    if (text === 'commit' || text === 'rollback') this.#inTransaction = false
    return false
  }

  /** The `begin` and its `set local`s in one round trip (the simple protocol), answered as the `begin`. */
  async #begin(query: (...a: unknown[]) => unknown, text: string): Promise<unknown> {
    const results = await (query.call(this.#client, text) as Promise<unknown>)
    return Array.isArray(results) ? results[0] : results
  }

  release(): void {
    // A connection released mid-transaction is rolled back or dropped by the pool's user.
    this.#inTransaction = false
    this.#client.release(this.broken)
  }
}
