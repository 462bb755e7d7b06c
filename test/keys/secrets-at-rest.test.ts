import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { form, useTestApp, withKey } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('secrets at rest', () => {
  const t = useTestApp()

  /** Every row of every table, as text. */
  async function dumpTables(): Promise<string> {
    const tables =
      t.database.dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
            t.database.db,
          )
        : await sql<{
            name: string
          }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
            t.database.db,
          )
    let dump = ''
    for (const { name } of tables.rows) {
      const rows = await sql`select * from ${sql.table(name)}`.execute(t.database.db)
      dump += `${name}\n${JSON.stringify(rows.rows)}\n`
    }
    return dump
  }

  it('never stores an API key in the clear, in any table or in the database files', async () => {
    const keys: string[] = []
    for (let i = 0; i < 3; i++) {
      const { apiKey } = await t.newAccount()
      keys.push(apiKey)
      // Use each key, so that last-used bookkeeping and idempotency rows exist too.
      const call = withKey(t.app, apiKey)
      const f = form({ name: 'Rex' })
      await call({
        method: 'POST',
        url: '/v1/pet',
        payload: f.payload,
        headers: { ...f.headers, 'idempotency-key': `k${i}` },
      })
    }
    const dump = await dumpTables()
    expect(dump).toContain('pet_sk_') // the displayed prefix is there: the dump really holds key rows
    for (const key of keys) {
      expect(dump).not.toContain(key)
      expect(dump).not.toContain(key.slice(7)) // nor its secret part
    }
    if (t.database.dialect === 'sqlite') {
      const dir = dirname(t.database.location.replace(/^sqlite:/, ''))
      const bytes = readdirSync(dir)
        .map((f) => readFileSync(join(dir, f)).toString('latin1'))
        .join('')
      for (const key of keys) expect(bytes).not.toContain(key.slice(7))
    }
  })
})
