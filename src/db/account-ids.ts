import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database, Db } from './schema.ts'

/**
 * Per-account ids: account A's pet 7 and account B's pet 7 are different pets, and no id an
 * account sees says anything about another account's activity (a global sequence would let an
 * account count everyone's pets).
 *
 * Each kind of record names the table and integer column its ids live in; the column must be
 * unique per account (a unique index on `(account_id, column)`), which is what catches an id
 * taken twice. To give another table per-account ids, add it here.
 */
export const ID_KINDS = {
  pet: { table: 'pets', column: 'id' },
  /** The integer id v2 shows a user (its v1 id is the `usr_…` text). */
  user: { table: 'users', column: 'petstore_id' },
  order: { table: 'orders', column: 'id' },
} as const satisfies Record<string, { table: string; column: string }>

export type IdKind = keyof typeof ID_KINDS

/** The highest id there is: every JSON client reads ids up to 2^53 − 1 exactly. */
export const MAX_ID = Number.MAX_SAFE_INTEGER

/** Ids a process takes from an account's counter at once. */
const DEFAULT_BLOCK_SIZE = 64
/** Accounts (times kinds) whose unused ids a process remembers; the oldest are forgotten first. */
const DEFAULT_MAX_CACHED = 10_000
/**
 * Collisions one insert may meet before giving up. Each retry takes an id that was free when it
 * looked, so only other creates taking those very ids in between, ten times over, reach it.
 */
const MAX_ATTEMPTS = 10
/** Blocks given back in one statement at a clean stop. */
const RELEASE_BATCH = 500

interface Block {
  next: number
  last: number
}

/**
 * Hands out ids per account and kind, from 1 up, gaps allowed. One per DatabaseHandle (`ids`).
 *
 * The counters live in `account_sequences(account_id, kind, next_id)`. A process reserves a block
 * of ids at a time in a statement of its own, committed at once, and hands them out from memory:
 * no create holds the counter's row lock across its transaction, so creates from many instances
 * on PostgreSQL do not queue on one row, and most creates cost no counter statement at all. The
 * first reservation of an (account, kind) starts past the highest id already in the table, so
 * rows that existed before the counter (migrated data) keep their ids and are never collided
 * with. A clean stop gives the unused rest of each block back (`release`), where no other process
 * has reserved after it, so ids go on after a restart; a crash forfeits them: ids are unique, not
 * dense.
 *
 * Clients may also choose ids (`POST /v2/pet` with an `id`), which may land where the counter
 * has not reached yet. So an assigned id is inserted with `ON CONFLICT DO NOTHING` (which, unlike
 * a unique violation, leaves a PostgreSQL transaction usable): an insert that found its id taken
 * reserves again, inside its transaction, from past the account's highest id, and retries. When
 * a client took an id near MAX_ID there is no room past the highest: the retry takes the first
 * free id after the one found taken, however many in a row the client chose, so no choice of ids
 * can make a create fail.
 *
 * Use: `const id = await database.ids.reserve(accountId, 'pet')` BEFORE opening the create's
 * transaction, then inside it `id.insert(trx, (n) => insertRow(trx, n))`, where `insertRow`
 * inserts with id `n` and `ON CONFLICT (account_id, id) DO NOTHING RETURNING …`, answering
 * undefined when nothing was inserted. Reserving inside a transaction would, on PostgreSQL, ask
 * the pool for a second connection while holding one: with every connection held by such
 * transactions, none would ever be free.
 *
 * An insert that is atomic on its own (PostgreSQL's one-statement pet create) passes the root
 * Kysely instead of a transaction: a collision's reservation is then a statement of its own,
 * committed at once like `reserve`'s, and holds no connection while it waits for another.
 */
export class AccountIds {
  readonly #root: Kysely<Database>
  readonly #postgres: boolean
  readonly #blockSize: number
  readonly #maxCached: number
  readonly #blocks = new Map<string, Block>()
  readonly #reserving = new Map<string, Promise<void>>()

  constructor(
    root: Kysely<Database>,
    options: { postgres: boolean; blockSize?: number; maxCached?: number },
  ) {
    this.#root = root
    this.#postgres = options.postgres
    this.#blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE
    this.#maxCached = options.maxCached ?? DEFAULT_MAX_CACHED
  }

  /** An id for one create of `kind` in the account. Call it outside any transaction. */
  async reserve(accountId: string, kind: IdKind): Promise<ReservedId> {
    const key = `${accountId}\u0000${kind}`
    for (;;) {
      const block = this.#blocks.get(key)
      if (block !== undefined && block.next <= block.last) {
        return new ReservedId(this, accountId, kind, block.next++)
      }
      // One reservation at a time per key: the requests that arrive meanwhile share its block.
      let reserving = this.#reserving.get(key)
      if (reserving === undefined) {
        reserving = this.#reserveBlock(this.#root, accountId, kind, 1)
          .then((fresh) => this.#remember(key, fresh))
          .finally(() => this.#reserving.delete(key))
        this.#reserving.set(key, reserving)
      }
      await reserving
    }
  }

  /**
   * The id to try after `taken` was found in use, read on the insert's `trx` (its transaction, or
   * the root instance for an insert atomic on its own): the first of a block reserved past the
   * account's highest id; or, when that would leave too few ids below MAX_ID (a client chose one
   * near it), the first id after `taken` that no row has, from 1 again past MAX_ID.
   */
  async afterCollision(trx: Db, accountId: string, kind: IdKind, taken: number): Promise<number> {
    const { table, column } = ID_KINDS[kind]
    const { rows } = await sql<{ highest: number | string | null }>`
      select max(${sql.ref(column)}) as highest from ${sql.table(table)} where account_id = ${accountId}`.execute(
      trx,
    )
    const highest = Number(rows[0]?.highest ?? 0)
    if (highest + this.#blockSize >= MAX_ID) {
      const free = await this.#firstFree(trx, accountId, kind, taken)
      return free <= MAX_ID ? free : this.#firstFree(trx, accountId, kind, 1)
    }
    const block = await this.#reserveBlock(trx, accountId, kind, highest + 1)
    const id = block.next++
    this.#remember(`${accountId}\u0000${kind}`, block)
    return id
  }

  /**
   * The first id from `from` on that no row of the account has: `from` itself, or one past the
   * end of the run of taken ids it begins (the unique index walked from `from`, stopping at the
   * first id whose successor is free).
   */
  async #firstFree(db: Db, accountId: string, kind: IdKind, from: number): Promise<number> {
    const { table, column } = ID_KINDS[kind]
    const id = sql.ref(`p.${column}`)
    const int = (value: number) => sql`cast(${value} as bigint)`
    const { rows } = await sql<{ free: number | string | null }>`
      select min(free) as free from (
        select ${int(from)} as free
         where not exists (select 1 from ${sql.table(table)}
                            where account_id = ${accountId} and ${sql.ref(column)} = ${int(from)})
        union all
        select * from (
          select ${id} + 1 as free from ${sql.table(table)} as p
           where p.account_id = ${accountId} and ${id} >= ${int(from)}
             and not exists (select 1 from ${sql.table(table)} as q
                              where q.account_id = ${accountId} and ${sql.ref(`q.${column}`)} = ${id} + 1)
           order by ${id} limit 1
        ) as run_end
      ) as candidates`.execute(db)
    return Number(rows[0]?.free ?? from)
  }

  /**
   * Gives the unused rest of every block back to its counter, for a clean stop (after the last
   * create): ids then go on after a restart. A block goes back only while the counter still ends
   * where the block ends, that is while no process has reserved after it; otherwise its rest is
   * forfeited, since the counter cannot be moved back past ids handed out since. The blocks are
   * forgotten first, so whatever this process reserves afterwards comes from the counter again.
   * A database that cannot be reached forfeits them all: a gap, nothing worse.
   */
  async release(): Promise<void> {
    const unused = [...this.#blocks].filter(([, block]) => block.next <= block.last)
    this.#blocks.clear()
    const int = (value: number) => sql`cast(${value} as bigint)`
    try {
      for (let at = 0; at < unused.length; at += RELEASE_BATCH) {
        const rows = unused.slice(at, at + RELEASE_BATCH).map(([key, block]) => {
          const [accountId, kind] = key.split('\u0000')
          return sql`(${sql`cast(${accountId} as text)`}, ${sql`cast(${kind} as text)`}, ${int(block.next)}, ${int(block.last + 1)})`
        })
        await sql`
          with released (account_id, kind, next_id, end_id) as (values ${sql.join(rows)})
          update ${sql.table('account_sequences')} set next_id = released.next_id
            from released
           where account_sequences.account_id = released.account_id
             and account_sequences.kind = released.kind
             and account_sequences.next_id = released.end_id`.execute(this.#root)
      }
    } catch {
      // Unreachable or closing: those ids stay forfeited.
    }
  }

  /**
   * Moves the counter on by a block and answers the block: ids from `max(counter, atLeast)`, or
   * for a new counter from past the table's highest id (from 1 if that is too near MAX_ID). A
   * block that would pass MAX_ID starts over from 1 instead (ids near the top were taken, or
   * handed out and deleted): the ids there that rows still have are met as collisions.
   */
  async #reserveBlock(db: Db, accountId: string, kind: IdKind, atLeast: number): Promise<Block> {
    const { table, column } = ID_KINDS[kind]
    const size = this.#blockSize
    const greatest = sql.raw(this.#postgres ? 'greatest' : 'max')
    const int = (value: number) => sql`cast(${value} as bigint)`
    const fitting = (start: RawBuilder<unknown>) =>
      sql`(case when ${start} + ${int(size - 1)} <= ${int(MAX_ID)} then ${start} else 1 end)`
    const highest = sql`(select coalesce(max(${sql.ref(column)}), 0) from ${sql.table(table)} where account_id = ${accountId})`
    const { rows } = await sql<{ next_id: number | string }>`
      insert into ${sql.table('account_sequences')} (account_id, kind, next_id)
      values (
        ${accountId},
        ${kind},
        ${fitting(sql`${greatest}(${highest} + 1, ${int(atLeast)})`)} + ${int(size)}
      )
      on conflict (account_id, kind) do update
        set next_id = ${fitting(sql`${greatest}(account_sequences.next_id, ${int(atLeast)})`)} + ${int(size)}
      returning next_id`.execute(db)
    const end = Number(rows[0]!.next_id)
    return { next: end - size, last: end - 1 }
  }

  #remember(key: string, block: Block): void {
    this.#blocks.delete(key)
    this.#blocks.set(key, block)
    if (this.#blocks.size > this.#maxCached) {
      const oldest = this.#blocks.keys().next().value
      if (oldest !== undefined) this.#blocks.delete(oldest)
    }
  }
}

/**
 * An id reserved for one create (AccountIds.reserve); its `insert` runs inside the create's
 * transaction, or on the root instance when each insert is atomic on its own.
 */
export class ReservedId {
  readonly #ids: AccountIds
  readonly #accountId: string
  readonly #kind: IdKind
  /** The id the first insert tries. */
  readonly id: number

  constructor(ids: AccountIds, accountId: string, kind: IdKind, id: number) {
    this.#ids = ids
    this.#accountId = accountId
    this.#kind = kind
    this.id = id
  }

  /**
   * Calls `insert(id)`; while it answers undefined (the id was taken: its ON CONFLICT DO NOTHING
   * inserted nothing), calls it again with a fresh id. Answers what the successful insert did.
   */
  async insert<T>(trx: Db, insert: (id: number) => Promise<T | undefined>): Promise<T> {
    let id = this.id
    for (let attempt = 1; ; attempt++) {
      const done = await insert(id)
      if (done !== undefined) return done
      if (attempt === MAX_ATTEMPTS) break
      id = await this.#ids.afterCollision(trx, this.#accountId, this.#kind, id)
    }
    throw new Error(`Found ${MAX_ATTEMPTS} ${this.#kind} ids in use in a row for account ${this.#accountId}.`)
  }
}
