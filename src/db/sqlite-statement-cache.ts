import type BetterSqlite3 from 'better-sqlite3'

/**
 * Kysely's SQLite driver calls `prepare()` for every query. Compiling the same SQL again costs
 * as much as running a small insert, so the driver (sqlite-group-commit.ts) takes its
 * statements from here instead. better-sqlite3 runs statements synchronously and
 * nothing streams, so one statement object can safely serve every query with the same text.
 */
export class StatementCache {
  readonly #db: BetterSqlite3.Database
  readonly #maxStatements: number
  readonly #statements = new Map<string, BetterSqlite3.Statement>()

  constructor(db: BetterSqlite3.Database, maxStatements = 500) {
    this.#db = db
    this.#maxStatements = maxStatements
  }

  prepare(sql: string): BetterSqlite3.Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      statement = this.#db.prepare(sql)
      if (this.#statements.size >= this.#maxStatements) {
        // Maps iterate in insertion order: drop the oldest entry.
        const oldest = this.#statements.keys().next().value
        if (oldest !== undefined) this.#statements.delete(oldest)
      }
      this.#statements.set(sql, statement)
    }
    return statement
  }

  /** Forgets every statement and closes the connection. */
  close(): void {
    this.#statements.clear()
    this.#db.close()
  }
}
