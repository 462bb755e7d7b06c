import { type Compilable, type CompiledQuery, createQueryId } from 'kysely'
import { isPostgres } from './dialect.ts'
import { nameStatement } from './named-statements.ts'
import type { Db } from './schema.ts'

/**
 * A Kysely query built and compiled once per dialect, then run with new parameter values
 * (why: docs/ARCHITECTURE.md, "Under the repositories").
 *
 *     const findById = prepareQuery((db, p) =>
 *       db.selectFrom('pets').selectAll().where('id', '=', p('id')),
 *     )
 *     const rows = await findById.execute(db, { id: 42 })
 *
 * The builder callback must produce the same SQL whatever the values: a placeholder stands for
 * a value only (never an identifier, an operator or a list whose length varies); queries whose
 * shape varies keep one prepared query per shape (see `variants`).
 *
 * Callers on the hot paths merge the parts of `args` (a row, its event's columns) with
 * Object.assign rather than object spreads: on Node 20 (V8 11.3) a literal that spreads a second
 * object, or adds properties after a spread, takes a slow path many times Object.assign's cost,
 * paid per request (Node 22 and 24 take either quickly).
 */
export interface PreparedQuery<Args, Row> {
  execute(db: Db, args: Args): Promise<Row[]>
  /** For a write without RETURNING: how many rows it inserted, changed or deleted. */
  executeWrite(db: Db, args: Args): Promise<number>
}

/** Stands for the value of parameter `name` in a prepared query's builder. */
export type Placeholder<Args> = <K extends keyof Args & string>(name: K) => Args[K]

/** Placeholders are strings no caller would pass: a NUL byte, a marker and the name. */
const MARK = '\u0000prepared:'

export function prepareQuery<Args extends object, Row>(
  build: (db: Db, p: Placeholder<Args>) => Compilable<Row>,
): PreparedQuery<Args, Row> {
  // A Kysely instance and its transactions share one adapter object, so it keys the compiled SQL
  // per dialect. getExecutor() is marked internal in Kysely's typings; kysely is pinned to 0.28.x
  // and test/db/prepared-query.test.ts runs this on both dialects.
  const compiled = new WeakMap<object, { query: CompiledQuery<Row>; slots: Slot[] }>()
  const run = (db: Db, args: Args) => {
    const dialect = db.getExecutor().adapter
    let entry = compiled.get(dialect)
    if (entry === undefined) {
      const query = build(db, ((name: string) => `${MARK}${name}`) as Placeholder<Args>).compile()
      // On PostgreSQL, parsed and planned once per connection (src/db/named-statements.ts).
      if (isPostgres(db)) nameStatement(query.sql)
      entry = { query, slots: query.parameters.map(toSlot) }
      compiled.set(dialect, entry)
    }
    const values = args as Record<string, unknown>
    const parameters = entry.slots.map((slot) => (slot.name === undefined ? slot.value : values[slot.name]))
    return db.executeQuery<Row>({ ...entry.query, queryId: createQueryId(), parameters })
  }
  return {
    async execute(db, args) {
      return (await run(db, args)).rows
    },
    async executeWrite(db, args) {
      return Number((await run(db, args)).numAffectedRows ?? 0)
    },
  }
}

/** One prepared query per shape of a query that varies (which columns an update sets, say). */
export function variants<Shape, Args extends object, Row>(
  keyOf: (shape: Shape) => string,
  build: (shape: Shape) => (db: Db, p: Placeholder<Args>) => Compilable<Row>,
): (shape: Shape) => PreparedQuery<Args, Row> {
  const byKey = new Map<string, PreparedQuery<Args, Row>>()
  return (shape) => {
    const key = keyOf(shape)
    let query = byKey.get(key)
    if (query === undefined) {
      query = prepareQuery(build(shape))
      byKey.set(key, query)
    }
    return query
  }
}

interface Slot {
  name?: string
  value?: unknown
}

function toSlot(parameter: unknown): Slot {
  if (typeof parameter === 'string' && parameter.startsWith(MARK))
    return { name: parameter.slice(MARK.length) }
  return { value: parameter }
}
