import { sql } from 'kysely'
import type { TestDatabase } from './database.ts'
import { DIALECT } from './database.ts'

/**
 * Runs `body` while the events table refuses every event whose data contains `word` (only
 * events of `type`, when given): a change whose event cannot be written, to show that the
 * change is then not written either. A CHECK constraint on PostgreSQL, a trigger on SQLite.
 */
export async function whileEventsRefused(
  database: TestDatabase,
  refused: { word: string; type?: string },
  body: () => Promise<void>,
): Promise<void> {
  const { db } = database
  const { word, type } = refused
  if (DIALECT === 'postgres') {
    const condition =
      type === undefined
        ? sql`position(${sql.lit(word)} in data) = 0`
        : sql`type <> ${sql.lit(type)} or position(${sql.lit(word)} in data) = 0`
    await sql`alter table events add constraint test_refused_event check (${condition})`.execute(db)
  } else {
    const condition =
      type === undefined
        ? sql`instr(new.data, ${sql.lit(word)}) > 0`
        : sql`new.type = ${sql.lit(type)} and instr(new.data, ${sql.lit(word)}) > 0`
    await sql`create trigger test_refused_event before insert on events when ${condition}
      begin select raise(abort, 'refused event'); end`.execute(db)
  }
  try {
    await body()
  } finally {
    if (DIALECT === 'postgres') {
      await sql`alter table events drop constraint test_refused_event`.execute(db)
    } else {
      await sql`drop trigger test_refused_event`.execute(db)
    }
  }
}
