import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.ts'
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
describeDb(
  'named statements on PostgreSQL',
  () => {
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
      expect(finds[0]?.name).toMatch(/^pet_service_[0-9a-f]{16}$/)
    })

    it('runs a statement again on its connection when a migration changed its table, outside a transaction', async () => {
      await database.db.connection().execute(async (connection) => {
        await findPet(connection, 'acct_none', 1)
        // Another session (a newer version's migration) adds a column under the prepared `select *`.
        await sql`alter table pets add column extra_one text`.execute(database.db)
        await expect(findPet(connection, 'acct_none', 1)).resolves.toBeUndefined()
      })
    })

    /** A handle of its own on the test database: its pool's warnings, and statements named. */
    const handle = (warnings: string[]) =>
      openDatabase(database.url, {
        poolSize: 2,
        pooler: { pooler: 'none', preparedStatements: true },
        onWarning: (message) => warnings.push(message),
      })

    /** The name and text of findPet's statement, as the server keeps it. */
    const findPetStatement = async (connection: Db) => {
      await findPet(connection, 'acct_none', 1)
      const found = (await preparedOn(connection)).find((s) => /^select \* from "pets"/.test(s.statement))
      expect(found).toBeDefined()
      return found!
    }

    it('runs a statement its server connection lost again unnamed, and says once to set DB_PREPARED_STATEMENTS=false', async () => {
      const warnings: string[] = []
      const own = handle(warnings)
      try {
        await own.db.connection().execute(async (connection) => {
          const { name } = await findPetStatement(connection)
          // What a transaction pooler does: the next query lands on a server connection without it.
          await sql.raw(`deallocate ${name}`).execute(connection)
          await expect(findPet(connection, 'acct_none', 1)).resolves.toBeUndefined()
          await expect(findPet(connection, 'acct_none', 2)).resolves.toBeUndefined()
          expect(await preparedOn(connection)).toEqual([])
        })
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(/DB_PREPARED_STATEMENTS=false/)
      } finally {
        await own.close()
      }
    })

    it('runs a statement again unnamed when its server connection already has one by its name', async () => {
      const statement = await database.db.connection().execute(findPetStatement)
      const warnings: string[] = []
      const own = handle(warnings)
      try {
        await own.db.connection().execute(async (connection) => {
          // Another client of a transaction pooler prepared it on this server connection.
          await sql.raw(`prepare ${statement.name} as ${statement.statement}`).execute(connection)
          await expect(findPet(connection, 'acct_none', 1)).resolves.toBeUndefined()
        })
        expect(warnings).toHaveLength(1)
      } finally {
        await own.close()
      }
    })

    it('answers 503 (retry) when a lost statement was inside a transaction, and names no statement after', async () => {
      const warnings: string[] = []
      const own = handle(warnings)
      try {
        await own.db.connection().execute(async (connection) => {
          const { name } = await findPetStatement(connection)
          await sql.raw(`deallocate ${name}`).execute(connection)
          await sql`begin`.execute(connection)
          try {
            await expect(findPet(connection, 'acct_none', 1)).rejects.toBeInstanceOf(DatabaseUnavailableError)
          } finally {
            await sql`rollback`.execute(connection)
          }
          await expect(findPet(connection, 'acct_none', 1)).resolves.toBeUndefined()
        })
        expect(warnings).toHaveLength(1)
      } finally {
        await own.close()
      }
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
  },
  {
    directOnly:
      "each test reads one server session's prepared statements, and statements go unnamed there (DB_POOLER=transaction)",
  },
)
