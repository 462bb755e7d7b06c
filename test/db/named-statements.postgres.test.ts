import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DatabaseUnavailableError } from '../../src/db/database-errors.ts'
import type { Db } from '../../src/db/schema.ts'
import { findPet } from '../../src/pets/pets-service.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

/**
 * PostgreSQL: the queries prepared once (src/db/prepared-query.ts) go as named statements
 * (src/db/named-statements.ts), parsed and planned once per connection; a migration that changes
 * a table under them does not break a connection that prepared them before
 * (src/db/postgres-pool.ts).
 */
describeDb('named statements on PostgreSQL', () => {
  let database: TestDatabase

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.destroy())

  const preparedOn = async (connection: Db) =>
    (
      await sql<{
        name: string
        statement: string
      }>`select name, statement from pg_prepared_statements`.execute(connection)
    ).rows

  it("prepares a prepared query's statement once per connection, under one name", async () => {
    const statements = await database.db.connection().execute(async (connection) => {
      await findPet(connection, 'acct_none', 1)
      await findPet(connection, 'acct_none', 2)
      return preparedOn(connection)
    })
    const finds = statements.filter((s) => /^select \* from "pets"/.test(s.statement))
    expect(finds).toHaveLength(1)
    expect(finds[0]?.name).toMatch(/^pet_service_\d+$/)
  })

  it('runs a statement again on its connection when a migration changed its table, outside a transaction', async () => {
    await database.db.connection().execute(async (connection) => {
      await findPet(connection, 'acct_none', 1)
      // Another session (a newer version's migration) adds a column under the prepared `select *`.
      await sql`alter table pets add column extra_one text`.execute(database.db)
      await expect(findPet(connection, 'acct_none', 1)).resolves.toBeUndefined()
    })
  })

  it('answers 503 (retry) when it happens inside a transaction, which cannot run it again', async () => {
    await database.db.connection().execute(async (connection) => {
      await findPet(connection, 'acct_none', 1)
      await sql`alter table pets add column extra_two text`.execute(database.db)
      await sql`begin`.execute(connection)
      try {
        await expect(findPet(connection, 'acct_none', 1)).rejects.toBeInstanceOf(DatabaseUnavailableError)
      } finally {
        await sql`rollback`.execute(connection)
      }
    })
    // The pool dropped that connection: the next ones prepare afresh and work.
    await expect(findPet(database.db, 'acct_none', 1)).resolves.toBeUndefined()
  })
})
