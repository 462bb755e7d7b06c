import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Tracer } from '@opentelemetry/api'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, type Dialect as KyselyDialect, sql } from 'kysely'
import pg from 'pg'
import { type Config, type DbPooler, loadConfig, sqlitePath } from '../config/config.ts'
import { AccountIds } from './account-ids.ts'
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.ts'
import { createPostgresPool } from './postgres-pool.ts'
import type { Database } from './schema.ts'
import { GroupCommitMonitor, GroupCommitSqliteDialect } from './sqlite-group-commit.ts'
import { TracedDialect } from './traced-dialect.ts'

export type Dialect = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  /**
   * For the work outside requests (the webhooks worker, the purges, the event streams' poller).
   * On PostgreSQL with a background pool (DatabaseOptions.backgroundPoolSize) it has connections
   * of its own: requests holding every connection of the main pool would otherwise stop it, and
   * it could take connections the requests wait for. Elsewhere it is `db` (SQLite has one writer,
   * shared through its group commit).
   */
  background: Kysely<Database>
  dialect: Dialect
  /** Per-account ids for new records (account-ids.ts); one per handle, as its blocks are. */
  ids: AccountIds
  /** Where the data lives, without credentials: for logs. */
  location: string
  /** For SQLite only: the raw connection (backups, checkpoints). */
  sqlite?: BetterSqlite3.Database
  /** For SQLite only: what the group commit reports (batch sizes, commit times, the queue). */
  groupCommit?: GroupCommitMonitor
  /** For PostgreSQL only: the pool, for its connection and queue counts. */
  pool?: pg.Pool
  /** For PostgreSQL with a background pool only: that pool, for its counts. */
  backgroundPool?: pg.Pool
  /** For PostgreSQL only: the pooler in front of it, for another handle on the same database. */
  pooler?: PoolerSettings
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL: connections in the pool. */
  poolSize?: number
  /** PostgreSQL: connections of the background work's own pool; absent, it shares the main one. */
  backgroundPoolSize?: number
  /** OpenTelemetry: a span for every query and transaction of a request (absent: no tracing, no cost). */
  tracer?: Tracer
  /** OpenTelemetry: the share (0 to 1) of the work outside requests traced too (TRACES_BACKGROUND_RATIO). */
  backgroundTraceRatio?: number
  /** Bounds on every wait for the database; the configuration's defaults when absent. */
  timeouts?: DatabaseTimeouts
  /** PostgreSQL: a connection pooler in front of the server (none when absent). */
  pooler?: PoolerSettings
  /** PostgreSQL: a connection failed outside any query (logged; the pool replaces it). */
  onConnectionError?: (error: Error) => void
  /** PostgreSQL: something the operator should change (logged as a warning), said once. */
  onWarning?: (message: string) => void
}

/** See DB_POOLER and DB_PREPARED_STATEMENTS, and src/db/postgres-pool.ts. */
export interface PoolerSettings {
  pooler: DbPooler
  preparedStatements: boolean
}

export function poolerSettings(config: Config): PoolerSettings {
  return { pooler: config.dbPooler, preparedStatements: config.dbPreparedStatements }
}

/** Milliseconds; see DB_CONNECT_TIMEOUT_SECONDS, DB_STATEMENT_TIMEOUT_SECONDS, DB_LOCK_TIMEOUT_SECONDS. */
export interface DatabaseTimeouts {
  connectMs: number
  statementMs: number
  lockMs: number
}

export function databaseTimeouts(config: Config): DatabaseTimeouts {
  return {
    connectMs: config.dbConnectTimeoutSeconds * 1000,
    statementMs: config.dbStatementTimeoutSeconds * 1000,
    lockMs: config.dbLockTimeoutSeconds * 1000,
  }
}

export const DEFAULT_DATABASE_TIMEOUTS = databaseTimeouts(loadConfig({}))

// int8 (bigint) columns come back as strings by default; pet ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

export function openDatabase(databaseUrl: string, options: DatabaseOptions = {}): DatabaseHandle {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(sqlitePath(databaseUrl), options)
  return openPostgres(databaseUrl, options)
}

function traced(
  dialect: KyselyDialect,
  system: 'sqlite' | 'postgresql',
  options: DatabaseOptions,
): KyselyDialect {
  const { tracer, backgroundTraceRatio = 0 } = options
  return tracer === undefined
    ? dialect
    : new TracedDialect(dialect, { tracer, system, backgroundRatio: backgroundTraceRatio })
}

function openSqlite(path: string, options: DatabaseOptions): DatabaseHandle {
  const { lockMs } = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const writer = new BetterSqlite3(path)
  writer.pragma('journal_mode = WAL')
  // NORMAL in WAL mode keeps every committed transaction across a crash of the process
  // (kill -9); only a power loss can take back the last few. FULL, a sync at every commit,
  // would cost most of the write rate.
  writer.pragma('synchronous = NORMAL')
  writer.pragma('foreign_keys = ON')
  // Each transaction of a group commit runs in a savepoint, which copies every page it first
  // touches into a sub-journal; past 64 KiB (two creates) SQLite moves that journal to a temporary
  // file, and every later page goes through a write() call. In memory it stays a copy. It never
  // holds more than one shared transaction's pages (https://sqlite.org/tempfiles.html, 2.6).
  writer.pragma('temp_store = MEMORY')
  // Another process (the admin CLI, a second server) may hold the write lock. SQLite's own wait
  // (busy_timeout) would block the event loop, and every request with it: the group-commit
  // driver waits for the lock itself, without blocking, up to lockMs.
  writer.pragma('busy_timeout = 0')
  // A second connection for reads outside transactions: it sees committed data only (a
  // `:memory:` database is private to its connection, so there the writer reads too). In WAL
  // mode readers wait for nobody but a moment's recovery of the log: a short, blocking wait.
  const reader = path === ':memory:' ? undefined : new BetterSqlite3(path)
  reader?.pragma(`busy_timeout = ${Math.min(lockMs, 100)}`)
  reader?.pragma('query_only = ON')
  const monitor = new GroupCommitMonitor()
  const dialect = new GroupCommitSqliteDialect({
    writer,
    monitor,
    ...(reader && { reader }),
    lockTimeoutMs: lockMs,
  })
  const db = new Kysely<Database>({ dialect: traced(dialect, 'sqlite', options) })
  const ids = new AccountIds(db, { postgres: false })
  return {
    db,
    background: db,
    dialect: 'sqlite',
    ids,
    location: `sqlite:${path}`,
    sqlite: writer,
    groupCommit: monitor,
    close: () => closeGivingIdsBack(db, ids),
  }
}

function openPostgres(databaseUrl: string, options: DatabaseOptions): DatabaseHandle {
  const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS
  const pooler = options.pooler ?? { pooler: 'none', preparedStatements: true }
  // One for both pools: what one learns of the pooler holds for the other (postgres-pool.ts).
  const preparedStatements = { named: pooler.preparedStatements }
  const open = (poolSize: number) => {
    const pool = createPostgresPool(databaseUrl, {
      poolSize,
      connectTimeoutMs: timeouts.connectMs,
      statementTimeoutMs: timeouts.statementMs,
      lockTimeoutMs: timeouts.lockMs,
      pooler: pooler.pooler,
      preparedStatements,
      onConnectionError: options.onConnectionError ?? (() => {}),
      onWarning: options.onWarning ?? (() => {}),
    })
    const db = new Kysely<Database>({
      dialect: traced(new CurrentSchemaPostgresDialect({ pool }), 'postgresql', options),
    })
    return { db, pool: pool.pg }
  }
  const main = open(options.poolSize ?? 10)
  const background = options.backgroundPoolSize === undefined ? undefined : open(options.backgroundPoolSize)
  const url = new URL(databaseUrl)
  url.password = ''
  url.username = ''
  const ids = new AccountIds(main.db, { postgres: true })
  return {
    db: main.db,
    background: background?.db ?? main.db,
    dialect: 'postgres',
    ids,
    location: url.toString(),
    pool: main.pool,
    ...(background === undefined ? {} : { backgroundPool: background.pool }),
    pooler,
    close: async () => {
      try {
        await closeGivingIdsBack(main.db, ids)
      } finally {
        await background?.db.destroy()
      }
    },
  }
}

/** A clean close: the ids reserved and not used go back first, so ids go on after a restart. */
async function closeGivingIdsBack(db: Kysely<Database>, ids: AccountIds): Promise<void> {
  await ids.release()
  await db.destroy()
}

/** True when the database answers a trivial query within `timeoutMs`. */
export async function isDatabaseReady(db: Kysely<Database>, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs)
  })
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  )
  try {
    return await Promise.race([answered, timedOut])
  } finally {
    clearTimeout(timer)
  }
}
