import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Tracer } from '@opentelemetry/api'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, type Dialect as KyselyDialect, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { sqlitePath } from '../config/config.ts'
import type { Database } from './schema.ts'
import { GroupCommitMonitor, GroupCommitSqliteDialect } from './sqlite-group-commit.ts'
import { TracedDialect } from './traced-dialect.ts'

export type Dialect = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: Dialect
  /** Where the data lives, without credentials: for logs. */
  location: string
  /** For SQLite only: the raw connection (backups, checkpoints). */
  sqlite?: BetterSqlite3.Database
  /** For SQLite only: what the group commit reports (batch sizes, commit times, the queue). */
  groupCommit?: GroupCommitMonitor
  /** For PostgreSQL only: the pool, for its connection and queue counts. */
  pool?: pg.Pool
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL: schema to use (tests isolate themselves in one schema each). */
  searchPath?: string
  /** PostgreSQL: connections in the pool. */
  poolSize?: number
  /** OpenTelemetry: a span for every query and transaction (absent: no tracing, no cost). */
  tracer?: Tracer
}

// int8 (bigint) columns come back as strings by default; pet ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

export function openDatabase(databaseUrl: string, options: DatabaseOptions = {}): DatabaseHandle {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(sqlitePath(databaseUrl), options)
  return openPostgres(databaseUrl, options)
}

function traced(dialect: KyselyDialect, system: 'sqlite' | 'postgresql', tracer?: Tracer): KyselyDialect {
  return tracer === undefined ? dialect : new TracedDialect(dialect, { tracer, system })
}

function openSqlite(path: string, options: DatabaseOptions): DatabaseHandle {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const writer = new BetterSqlite3(path)
  writer.pragma('journal_mode = WAL')
  // NORMAL in WAL mode keeps every committed transaction across a crash of the process
  // (kill -9); only a power loss can take back the last few. FULL costs 7x the write rate.
  writer.pragma('synchronous = NORMAL')
  writer.pragma('foreign_keys = ON')
  // Another process (the admin CLI, a second server) may hold the write lock for a moment.
  writer.pragma('busy_timeout = 5000')
  // A second connection for reads outside transactions: it sees committed data only (a
  // `:memory:` database is private to its connection, so there the writer reads too).
  const reader = path === ':memory:' ? undefined : new BetterSqlite3(path)
  reader?.pragma('busy_timeout = 5000')
  reader?.pragma('query_only = ON')
  const monitor = new GroupCommitMonitor()
  const dialect = new GroupCommitSqliteDialect({ writer, monitor, ...(reader && { reader }) })
  const db = new Kysely<Database>({ dialect: traced(dialect, 'sqlite', options.tracer) })
  return {
    db,
    dialect: 'sqlite',
    location: `sqlite:${path}`,
    sqlite: writer,
    groupCommit: monitor,
    close: () => db.destroy(),
  }
}

function openPostgres(databaseUrl: string, options: DatabaseOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    ...(options.searchPath === undefined ? {} : { options: `-c search_path=${options.searchPath}` }),
  })
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new Kysely<Database>({
    dialect: traced(new PostgresDialect({ pool }), 'postgresql', options.tracer),
  })
  const url = new URL(databaseUrl)
  url.password = ''
  url.username = ''
  return { db, dialect: 'postgres', location: url.toString(), pool, close: () => db.destroy() }
}

/** True when the database answers a trivial query. */
export async function isDatabaseReady(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db)
    return true
  } catch {
    return false
  }
}
