import type { Db } from '../../src/db/schema.ts'
import { newEventRow } from '../../src/events/events-service.ts'

class RolledBack extends Error {}

function petEvent(accountId: string, name: string) {
  return newEventRow({
    accountId,
    type: 'pet.created',
    objectId: name,
    object: { object: 'pet', name },
    at: new Date().toISOString(),
  })
}

/** An event of the account, committed; its id. */
export async function eventCommitted(db: Db, accountId: string, name: string): Promise<string> {
  const row = petEvent(accountId, name)
  await db.insertInto('events').values(row).execute()
  return row.id
}

/**
 * An event of the account inserted by a transaction left open until `commit()` or `rollback()`:
 * on PostgreSQL its `seq` is taken now, so events written meanwhile get higher ones and become
 * visible first. (SQLite runs one write transaction at a time: nothing else could write.)
 */
export async function eventLeftOpen(
  db: Db,
  accountId: string,
  name: string,
): Promise<{ id: string; commit(): Promise<void>; rollback(): Promise<void> }> {
  let decide!: (commit: boolean) => void
  const decided = new Promise<boolean>((resolve) => {
    decide = resolve
  })
  let inserted!: (id: string) => void
  const insertedId = new Promise<string>((resolve) => {
    inserted = resolve
  })
  const transaction = db
    .transaction()
    .execute(async (trx) => {
      const row = petEvent(accountId, name)
      await trx.insertInto('events').values(row).execute()
      inserted(row.id)
      if (!(await decided)) throw new RolledBack()
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error
    })
  const id = await Promise.race([insertedId, transaction.then(() => Promise.reject(new Error('no insert')))])
  return {
    id,
    async commit() {
      decide(true)
      await transaction
    },
    async rollback() {
      decide(false)
      await transaction
    },
  }
}
