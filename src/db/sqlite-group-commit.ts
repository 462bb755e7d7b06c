import type BetterSqlite3 from 'better-sqlite3'
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  SqliteDialect,
} from 'kysely'
import { LockingSqliteAdapter } from './sqlite-migration-lock.ts'
import { StatementCache } from './sqlite-statement-cache.ts'

/**
 * SQLite with group commit (the transactions of one event-loop turn share one commit), reads on
 * a second connection beside the writer, and a wait for another process's write lock that does
 * not block the event loop: docs/ARCHITECTURE.md, "Under the repositories".
 */
export interface GroupCommitOptions {
  writer: BetterSqlite3.Database
  /** A second connection to the same file; absent for `:memory:`, where reads use the writer. */
  reader?: BetterSqlite3.Database
  /** Savepoints after which a shared transaction commits without waiting for the turn to end. */
  maxBatch?: number
  /** Told about every shared commit (for metrics); the driver reports its queue to it too. */
  monitor?: GroupCommitMonitor
  /** How long a write waits for the write lock (and its turn) before failing with SQLITE_BUSY. */
  lockTimeoutMs?: number
}

/** One shared commit: how many transactions (and lone writes) it carried, and how long it took. */
export interface CommitReport {
  transactions: number
  seconds: number
  ok: boolean
}

/**
 * Where a group-commit driver reports what it does, so metrics can be kept without the database
 * layer knowing about them (src/observability/metrics.ts subscribes).
 */
export class GroupCommitMonitor {
  readonly #listeners = new Set<(report: CommitReport) => void>()
  #waiting: () => number = () => 0

  /** Calls `listener` after every shared commit; returns the function that stops it. */
  subscribe(listener: (report: CommitReport) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Transactions waiting for the writer right now. */
  waiting(): number {
    return this.#waiting()
  }

  get observed(): boolean {
    return this.#listeners.size > 0
  }

  report(report: CommitReport): void {
    for (const listener of this.#listeners) listener(report)
  }

  attachQueue(waiting: () => number): void {
    this.#waiting = waiting
  }
}

export class GroupCommitSqliteDialect extends SqliteDialect {
  readonly #options: GroupCommitOptions

  constructor(options: GroupCommitOptions) {
    super({ database: options.writer })
    this.#options = options
  }

  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter()
  }

  override createDriver(): Driver {
    return new GroupCommitSqliteDriver(this.#options)
  }
}

/** One shared SQLite transaction and everyone waiting for it to commit. */
interface Batch {
  members: number
  committed: Promise<void>
  settle: (error?: unknown) => void
}

class GroupCommitSqliteDriver implements Driver {
  readonly #writer: BetterSqlite3.Database
  readonly #writerStatements: StatementCache
  readonly #readerStatements: StatementCache
  readonly #maxBatch: number
  readonly #lockTimeoutMs: number
  readonly #mutex = new Mutex()
  readonly #monitor: GroupCommitMonitor | undefined
  #batch: Batch | undefined
  /**
   * Connection objects released, for the next acquire: Kysely's driver wrapper records every
   * connection object it is handed, the first time, in a WeakSet (kysely's runtime-driver.js), so
   * a new object per query costs an allocation and a WeakSet entry for the collector to clear.
   */
  readonly #idle: GroupCommitConnection[] = []

  constructor(options: GroupCommitOptions) {
    this.#writer = options.writer
    this.#monitor = options.monitor
    this.#monitor?.attachQueue(() => this.#mutex.waiting)
    this.#writerStatements = new StatementCache(this.#writer)
    this.#readerStatements =
      options.reader === undefined ? this.#writerStatements : new StatementCache(options.reader)
    this.#maxBatch = options.maxBatch ?? 256
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 5000
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#idle.pop() ?? new GroupCommitConnection(this)
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const deadline = Date.now() + this.#lockTimeoutMs
    await this.#mutex.lock({ deadline })
    try {
      await this.#joinBatch(deadline)
      this.#run('savepoint kysely_member')
    } catch (error) {
      this.#mutex.unlock()
      throw error
    }
    ;(connection as GroupCommitConnection).inTransaction = true
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const batch = this.#batch
    ;(connection as GroupCommitConnection).inTransaction = false
    try {
      this.#run('release kysely_member')
    } finally {
      this.#mutex.unlock()
    }
    if (batch === undefined) throw new Error('commit without a shared transaction')
    await batch.committed
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    ;(connection as GroupCommitConnection).inTransaction = false
    try {
      // Some errors (a full disk, say) make SQLite roll back the whole transaction itself: then
      // there is no savepoint left to go back to, and the batch's commit will fail for everyone.
      if (this.#writer.inTransaction) {
        this.#run('rollback to kysely_member')
        this.#run('release kysely_member')
      }
    } finally {
      this.#mutex.unlock()
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    ;(connection as GroupCommitConnection).inTransaction = false
    this.#idle.push(connection as GroupCommitConnection)
  }

  async destroy(): Promise<void> {
    await this.#mutex.lock()
    try {
      this.#commit(this.#batch)
    } finally {
      this.#mutex.unlock()
    }
    if (this.#readerStatements !== this.#writerStatements) this.#readerStatements.close()
    this.#writerStatements.close()
  }

  /** A statement outside any transaction: a read on the reader, a write in the shared batch. */
  async executeAlone<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.#writerStatements.prepare(query.sql)
    if (statement.readonly) return execute<R>(this.#readerStatements.prepare(query.sql), query)
    const deadline = Date.now() + this.#lockTimeoutMs
    await this.#mutex.lock({ deadline })
    let result: QueryResult<R>
    let batch: Batch
    try {
      batch = await this.#joinBatch(deadline)
      result = execute<R>(statement, query)
    } finally {
      this.#mutex.unlock()
    }
    await batch.committed
    return result
  }

  executeInTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return Promise.resolve(execute<R>(this.#writerStatements.prepare(query.sql), query))
  }

  /** Called with the mutex held: the open batch, or a new one. */
  async #joinBatch(deadline: number): Promise<Batch> {
    let batch = this.#batch
    if (batch !== undefined && !this.#writer.inTransaction) {
      // SQLite rolled the shared transaction back on its own (see rollbackTransaction).
      this.#batch = undefined
      batch.settle(new Error('the shared SQLite transaction was rolled back by SQLite'))
      batch = undefined
    }
    if (batch === undefined) {
      await this.#beginImmediate(deadline)
      const opened = newBatch()
      setImmediate(() => void this.#flush(opened))
      this.#batch = opened
      batch = opened
    }
    batch.members++
    if (batch.members === this.#maxBatch) void this.#flush(batch, { first: true })
    return batch
  }

  /** Takes the write lock, retrying after short pauses while another connection holds it. */
  async #beginImmediate(deadline: number): Promise<void> {
    for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
      try {
        this.#run('begin immediate')
        return
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() + pauseMs > deadline)
          throw error
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }

  /** `first`: ahead of the transactions already waiting, which would otherwise join this batch. */
  async #flush(batch: Batch, options: { first?: boolean } = {}): Promise<void> {
    await this.#mutex.lock({ first: options.first ?? false })
    try {
      this.#commit(batch)
    } finally {
      this.#mutex.unlock()
    }
  }

  /** Called with the mutex held. */
  #commit(batch: Batch | undefined): void {
    if (batch === undefined || batch !== this.#batch) return
    this.#batch = undefined
    const started = this.#monitor?.observed ? performance.now() : undefined
    let ok = true
    try {
      this.#run('commit')
      batch.settle()
    } catch (error) {
      ok = false
      if (this.#writer.inTransaction) this.#run('rollback')
      batch.settle(error)
    }
    if (started !== undefined) {
      const seconds = (performance.now() - started) / 1000
      this.#monitor?.report({ transactions: batch.members, seconds, ok })
    }
  }

  #run(sql: string): void {
    this.#writerStatements.prepare(sql).run()
  }
}

class GroupCommitConnection implements DatabaseConnection {
  inTransaction = false
  readonly #driver: GroupCommitSqliteDriver

  constructor(driver: GroupCommitSqliteDriver) {
    this.#driver = driver
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.inTransaction
      ? this.#driver.executeInTransaction<R>(query)
      : this.#driver.executeAlone<R>(query)
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered on SQLite here.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries is not supported by this SQLite driver')
  }
}

function execute<R>(statement: BetterSqlite3.Statement, query: CompiledQuery): QueryResult<R> {
  const parameters = query.parameters as unknown[]
  if (statement.reader) return { rows: statement.all(parameters) as R[] }
  const { changes, lastInsertRowid } = statement.run(parameters)
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
}

function newBatch(): Batch {
  let settle!: (error?: unknown) => void
  const committed = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error))
  })
  // Nobody may be waiting when the commit fails (every member rolled back): not an unhandled rejection.
  committed.catch(() => {})
  return { members: 0, committed, settle }
}

interface Waiter {
  resolve: () => void
  timer: NodeJS.Timeout | undefined
}

/**
 * First come, first served (unless asked to go first): the writer runs one transaction at a
 * time. A waiter with a deadline gives up at that deadline with SQLITE_BUSY.
 */
class Mutex {
  #held = false
  readonly #waiting: Waiter[] = []

  get waiting(): number {
    return this.#waiting.length
  }

  lock(options: { first?: boolean; deadline?: number } = {}): Promise<void> {
    if (!this.#held) {
      this.#held = true
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, timer: undefined }
      if (options.deadline !== undefined) {
        waiter.timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1)
          reject(busy())
        }, options.deadline - Date.now())
      }
      if (options.first) this.#waiting.unshift(waiter)
      else this.#waiting.push(waiter)
    })
  }

  unlock(): void {
    const next = this.#waiting.shift()
    if (next === undefined) {
      this.#held = false
      return
    }
    clearTimeout(next.timer)
    next.resolve()
  }
}

/** What SQLite itself says when a lock stays taken past busy_timeout. */
function busy(): Error {
  return Object.assign(new Error('database is locked: the write lock stayed taken past the lock timeout'), {
    code: 'SQLITE_BUSY',
  })
}
