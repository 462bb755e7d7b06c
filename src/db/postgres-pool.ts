import type { PostgresPool, PostgresPoolClient } from 'kysely'
import pg from 'pg'
import { DatabaseUnavailableError, databaseFailure, isServerReported } from './database-errors.ts'
import { isStalePreparedStatement, statementName } from './named-statements.ts'

export interface PostgresPoolOptions {
  poolSize: number
  /** Schema to use (tests isolate themselves in one schema each). */
  searchPath?: string | undefined
  /** Waiting for a pooled connection, opening one included. */
  connectTimeoutMs: number
  /** A statement's run time, and a transaction's idle time, on the server; 0 for no limit (migrations). */
  statementTimeoutMs: number
  /** Waiting for a row or table lock another session holds. */
  lockTimeoutMs: number
  /** A connection failed outside any query (the server went away, say). */
  onConnectionError: (error: Error) => void
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
 */
export interface BoundedPostgresPool extends PostgresPool {
  /** The node-postgres pool underneath, for its connection and queue counts (metrics). */
  readonly pg: pg.Pool
}

export function createPostgresPool(databaseUrl: string, options: PostgresPoolOptions): BoundedPostgresPool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    lock_timeout: options.lockTimeoutMs,
    ...(options.statementTimeoutMs === 0
      ? {}
      : {
          statement_timeout: options.statementTimeoutMs,
          idle_in_transaction_session_timeout: options.statementTimeoutMs,
          // Client side, for a server that stops answering altogether; a second more than the
          // server's own limit, so a slow statement gets the server's clearer error and keeps
          // its connection.
          query_timeout: options.statementTimeoutMs + 1000,
        }),
    keepAlive: true,
    // Names the service's sessions in pg_stat_activity (a connection string may name them otherwise).
    application_name: 'pet-service',
    ...(options.searchPath === undefined ? {} : { options: `-c search_path=${options.searchPath}` }),
  })
  // An idle connection that loses its server: the pool drops it and opens another when needed.
  pool.on('error', (error) => options.onConnectionError(error))
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onConnectionError(error))
  })

  const wrappers = new WeakMap<pg.PoolClient, CheckedOutClient>()
  return {
    pg: pool,
    async connect() {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        throw new DatabaseUnavailableError(`could not get a PostgreSQL connection: ${String(error)}`, {
          cause: error,
        })
      }
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = new CheckedOutClient(client)
        wrappers.set(client, wrapper)
      }
      wrapper.broken = undefined
      return wrapper
    },
    end: () => pool.end(),
  }
}

/** One pooled connection as Kysely sees it; the same object each time the connection is checked out. */
class CheckedOutClient implements PostgresPoolClient {
  broken: Error | undefined
  readonly #client: pg.PoolClient
  /** Between Kysely's `begin` (or `start transaction …`) and its `commit` or `rollback`. */
  #inTransaction = false

  constructor(client: pg.PoolClient) {
    this.#client = client
  }

  // Kysely calls query(sql, parameters) and, for streaming, query(cursor); both go through as
  // given, except that the SQL of a query prepared once goes as a named statement.
  query(...args: unknown[]): never {
    const [text, values] = args
    const name = typeof text === 'string' ? statementName(text) : undefined
    if (name === undefined && typeof text === 'string') this.#noteTransaction(text)
    const query = this.#client.query as (...a: unknown[]) => unknown
    const result =
      name === undefined ? query.apply(this.#client, args) : query.call(this.#client, { name, text, values })
    if (!(result instanceof Promise)) return result as never
    return result.catch((error: unknown) => {
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

  #noteTransaction(text: string): void {
    if (text === 'begin' || text.startsWith('start transaction')) this.#inTransaction = true
    else if (text === 'commit' || text === 'rollback') this.#inTransaction = false
  }

  release(): void {
    // A connection released mid-transaction is rolled back or dropped by the pool's user.
    this.#inTransaction = false
    this.#client.release(this.broken)
  }
}
