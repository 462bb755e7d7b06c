/**
 * What a failure of the database means for the client. `unavailable`: the database is away,
 * stalled or locked by someone else — nothing the client did; retry shortly (503). `storage_full`:
 * it has no room left for writes (507). Anything else is not the database's state.
 */
export type DatabaseFailure = 'unavailable' | 'storage_full'

/** PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/15/errcodes-appendix.html) that mean "retry later". */
const POSTGRES_UNAVAILABLE = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '25P03', // idle_in_transaction_session_timeout
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, in recovery
  '53300', // too_many_connections
])
const POSTGRES_DISK_FULL = '53100'

/** Socket errors: the server cannot be reached, or the connection broke. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/** node-postgres reports a lost or stalled connection with these messages and no code. */
const PG_CONNECTION_LOST =
  /^(Connection terminated|Query read timeout|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/

/** Marks an error as the database being unavailable, whatever it looked like. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options)
    this.name = 'DatabaseUnavailableError'
  }
}

export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  if (error instanceof DatabaseUnavailableError) return 'unavailable'
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  const message = (error as { message?: unknown }).message
  if (typeof code === 'string') {
    if (code === POSTGRES_DISK_FULL || code === 'SQLITE_FULL') return 'storage_full'
    if (POSTGRES_UNAVAILABLE.has(code) || code.startsWith('08') || NETWORK.has(code)) return 'unavailable'
    // Busy or locked by another connection, a failing disk, a file that cannot be opened.
    if (/^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|PROTOCOL)/.test(code)) return 'unavailable'
  }
  if (typeof message === 'string' && PG_CONNECTION_LOST.test(message)) return 'unavailable'
  return undefined
}

/** True for a failure reported by the PostgreSQL server itself (an SQLSTATE): the connection still works. */
export function isServerReported(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
}
