import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/**
 * Kysely's SQLite driver calls `prepare()` for every query. Compiling the same SQL again costs
 * about half of an insert's time (see shared/FACTS.md), so this wrapper hands it a cached
 * statement instead. better-sqlite3 runs statements synchronously and Kysely never streams
 * here, so one statement object can safely serve every query with the same text.
 */
export function withStatementCache(db: BetterSqlite3.Database, maxStatements = 500): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>()
  return {
    close: () => {
      cache.clear()
      db.close()
    },
    prepare: (sql: string): SqliteStatement => {
      let statement = cache.get(sql)
      if (statement === undefined) {
        statement = db.prepare(sql)
        if (cache.size >= maxStatements) {
          // Maps iterate in insertion order: drop the oldest entry.
          const oldest = cache.keys().next().value
          if (oldest !== undefined) cache.delete(oldest)
        }
        cache.set(sql, statement)
      }
      return statement as unknown as SqliteStatement
    },
  }
}
