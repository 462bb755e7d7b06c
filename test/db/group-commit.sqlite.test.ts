import { readdirSync, readlinkSync } from 'node:fs'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { GroupCommitSqliteDialect } from '../../src/db/sqlite-group-commit.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts'

// SQLite only: group commit is how the SQLite driver (src/db/sqlite-group-commit.ts) writes.
describe('SQLite group commit', () => {
  let database: TestDatabase
  let path: string
  let outsider: BetterSqlite3.Database

  beforeEach(async () => {
    database = await createTestDatabase({ migrate: false })
    path = database.location.replace(/^sqlite:/, '')
    await sql`create table notes (id integer primary key, body text not null)`.execute(database.db)
    // Checkpoints would empty the log and hide how many frames the commits wrote.
    database.sqlite!.pragma('wal_autocheckpoint = 0')
    outsider = new BetterSqlite3(path, { readonly: true })
  })
  afterEach(async () => {
    outsider.close()
    await database.destroy()
  })

  const insertNote = (db: TestDatabase['db'], body: string) =>
    sql`insert into notes (body) values (${body})`.execute(db)
  const bodies = () =>
    (outsider.prepare('select body from notes order by id').all() as { body: string }[]).map((r) => r.body)
  const walFrames = () => (database.sqlite!.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log

  it('commits the transactions of one turn of the event loop together', async () => {
    walFrames()
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        database.db.transaction().execute((trx) => insertNote(trx, `n${i}`)),
      ),
    )
    expect(bodies()).toHaveLength(50)
    // One commit per transaction would append at least one page to the log each time.
    expect(walFrames()).toBeLessThan(10)
  })

  it('answers a transaction only once another connection can see its data', async () => {
    await database.db.transaction().execute((trx) => insertNote(trx, 'seen'))
    expect(bodies()).toEqual(['seen'])
    await insertNote(database.db, 'alone')
    expect(bodies()).toEqual(['seen', 'alone'])
  })

  it('rolls back a failed transaction alone, keeping the others of its turn', async () => {
    const results = await Promise.allSettled([
      database.db.transaction().execute((trx) => insertNote(trx, 'first')),
      database.db.transaction().execute(async (trx) => {
        await insertNote(trx, 'doomed')
        throw new Error('changed my mind')
      }),
      database.db.transaction().execute((trx) => insertNote(trx, 'third')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(bodies()).toEqual(['first', 'third'])
  })

  it('never shows a read outside the transaction what is not committed yet', async () => {
    let seenOutside: unknown[] = []
    await database.db.transaction().execute(async (trx) => {
      await insertNote(trx, 'pending')
      expect((await sql`select body from notes`.execute(trx)).rows).toHaveLength(1)
      seenOutside = (await sql`select body from notes`.execute(database.db)).rows
    })
    expect(seenOutside).toEqual([])
    expect((await sql`select body from notes`.execute(database.db)).rows).toHaveLength(1)
  })

  it('fails every member when the shared commit fails, and keeps working afterwards', async () => {
    // A deferred foreign key is checked at commit: one member's bad row makes the commit fail.
    await sql`create table parents (id integer primary key)`.execute(database.db)
    await sql`create table children (id integer primary key, parent_id integer not null
      references parents(id) deferrable initially deferred)`.execute(database.db)
    const results = await Promise.allSettled([
      database.db.transaction().execute((trx) => insertNote(trx, 'innocent')),
      database.db
        .transaction()
        .execute((trx) => sql`insert into children (parent_id) values (42)`.execute(trx)),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/)
    expect(bodies()).toEqual([])
    await database.db.transaction().execute((trx) => insertNote(trx, 'later'))
    expect(bodies()).toEqual(['later'])
  })
  it('keeps the savepoints of a shared transaction in memory, not in a temporary file', async () => {
    // SQLite opens a temporary file and unlinks it at once: it shows as "(deleted)" here.
    const unlinkedFiles = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).endsWith('(deleted)')
        } catch {
          return false
        }
      }).length
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => insertNote(database.db, `${i}`.padEnd(1000, '.'))),
    )
    const before = unlinkedFiles()
    let during = -1
    // Each member rewrites every page (~50), which its savepoint journals: 200 KiB a member,
    // past the 64 KiB at which SQLite would move the journal to a file of its own.
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        database.db.transaction().execute(async (trx) => {
          await sql`update notes set body = body || 'x'`.execute(trx)
          if (i === 4) during = unlinkedFiles()
        }),
      ),
    )
    expect(during).toBe(before)
  })

  it('hands out the connection objects it got back instead of a new one per query', async () => {
    // Kysely records each new connection object a driver hands it (in a WeakSet): one per
    // query would be garbage made on every query.
    const writer = new BetterSqlite3(path)
    const driver = new GroupCommitSqliteDialect({ writer }).createDriver()
    try {
      const first = await driver.acquireConnection()
      const second = await driver.acquireConnection()
      expect(second).not.toBe(first)
      await driver.releaseConnection(first)
      await driver.releaseConnection(second)
      const again = [await driver.acquireConnection(), await driver.acquireConnection()]
      // toContain compares by identity (the objects look alike).
      expect(again).toContain(first)
      expect(again).toContain(second)
    } finally {
      await driver.destroy()
    }
  })
})
