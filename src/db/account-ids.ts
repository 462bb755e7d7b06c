import { type Kysely, sql } from 'kysely'
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
/** Collisions one insert may meet before giving up (each one moves the counter past them all). */
const MAX_ATTEMPTS = 10

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
 * with. A process's restart forfeits the rest of its blocks: ids are unique, not dense.
 *
 * Clients may also choose ids (`POST /v2/pet` with an `id`), which may land where the counter
 * has not reached yet. So an assigned id is inserted with `ON CONFLICT DO NOTHING` (which, unlike
 * a unique violation, leaves a PostgreSQL transaction usable): an insert that found its id taken
 * reserves again, inside its transaction, from past the account's highest id, and retries.
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
   * The id to try after `taken` was found in use: from a block reserved (on the insert's `trx`:
   * its transaction, or the root instance for an insert atomic on its own) past the account's highest id, unless that would leave too few ids below
   * MAX_ID (a client chose one near it), in which case just past `taken`.
   */
  async afterCollision(trx: Db, accountId: string, kind: IdKind, taken: number): Promise<number> {
    const { table, column } = ID_KINDS[kind]
    const { rows } = await sql<{ highest: number | string | null }>`
      select max(${sql.ref(column)}) as highest from ${sql.table(table)} where account_id = ${accountId}`.execute(
      trx,
    )
    const highest = Number(rows[0]?.highest ?? 0)
    const atLeast = highest + this.#blockSize < MAX_ID ? highest + 1 : taken + 1
    const block = await this.#reserveBlock(trx, accountId, kind, atLeast)
    const id = block.next++
    this.#remember(`${accountId}\u0000${kind}`, block)
    return id
  }

  /**
   * Moves the counter on by a block and answers the block: ids from `max(counter, atLeast)`, or
   * for a new counter from past the table's highest id (from 1 if that is too near MAX_ID).
   */
  async #reserveBlock(db: Db, accountId: string, kind: IdKind, atLeast: number): Promise<Block> {
    const { table, column } = ID_KINDS[kind]
    const size = this.#blockSize
    const greatest = sql.raw(this.#postgres ? 'greatest' : 'max')
    const int = (value: number) => sql`cast(${value} as bigint)`
    const { rows } = await sql<{ next_id: number | string }>`
      insert into ${sql.table('account_sequences')} (account_id, kind, next_id)
      values (
        ${accountId},
        ${kind},
        ${greatest}(
          (select case when coalesce(max(${sql.ref(column)}), 0) + ${int(size)} < ${int(MAX_ID)}
                  then coalesce(max(${sql.ref(column)}), 0) + 1 else 1 end
             from ${sql.table(table)} where account_id = ${accountId}),
          ${int(atLeast)}
        ) + ${int(size)}
      )
      on conflict (account_id, kind) do update
        set next_id = ${greatest}(account_sequences.next_id, ${int(atLeast)}) + ${int(size)}
      returning next_id`.execute(db)
    const end = Number(rows[0]!.next_id)
    if (end - 1 > MAX_ID) throw new Error(`No ${kind} ids left for account ${accountId}.`)
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
