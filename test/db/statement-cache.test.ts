import BetterSqlite3 from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { StatementCache } from '../../src/db/sqlite-statement-cache.ts'

describe('SQLite statement cache', () => {
  it('prepares each distinct SQL text once and evicts the oldest beyond its size', () => {
    const raw = new BetterSqlite3(':memory:')
    let prepared = 0
    const original = raw.prepare.bind(raw)
    raw.prepare = ((source: string) => {
      prepared++
      return original(source)
    }) as typeof raw.prepare
    const cached = new StatementCache(raw, 2)
    cached.prepare('select 1')
    cached.prepare('select 1')
    expect(prepared).toBe(1)
    cached.prepare('select 2')
    cached.prepare('select 3') // evicts "select 1"
    cached.prepare('select 1')
    expect(prepared).toBe(4)
    cached.close()
  })
})
